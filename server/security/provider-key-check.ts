// A cheap request that tells whether an account's own key works where it is sent, made when the
// key is saved: OpenAI-compatible servers list their models (GET …/models), Deepgram its projects
// (GET /v1/projects). Neither costs anything. Redirects are not followed.
export type KeyCheck = { ok: true } | { ok: false; rejected: boolean; message: string };

const DEFAULT_BASES: Record<string, string> = { openai: 'https://api.openai.com/v1', deepgram: 'https://api.deepgram.com' };

export async function checkProviderKey(vendor: string, apiKey: string, baseUrl: string | null, timeoutMs = 5_000): Promise<KeyCheck> {
  const base = (baseUrl ?? DEFAULT_BASES[vendor] ?? '').replace(/\/+$/, '');
  if (!base) return { ok: true };
  const url = vendor === 'deepgram' ? `${base}/v1/projects` : `${base}/models`;
  const authorization = vendor === 'deepgram' ? `Token ${apiKey}` : `Bearer ${apiKey}`;
  try {
    const response = await fetch(url, { headers: { authorization }, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    if (response.status === 401 || response.status === 403) {
      return { ok: false, rejected: true, message: `${vendor} refused this key (${response.status} from ${new URL(url).host})` };
    }
    if (!response.ok) return { ok: false, rejected: false, message: `${new URL(url).host} answered ${response.status} when the key was checked` };
    return { ok: true };
  } catch (error) {
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : (error as Error).message;
    return { ok: false, rejected: false, message: `${new URL(url).host} could not be reached to check the key: ${reason}` };
  }
}
