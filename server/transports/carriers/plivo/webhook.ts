// Plivo signs webhooks with its V3 signature: X-Plivo-Signature-V3 is the base64 HMAC-SHA256,
// keyed with the auth token, of `${url}.${nonce}` where the nonce is X-Plivo-Signature-V3-Nonce
// and, for a POST, the URL is followed by the sorted form fields (name then value, no
// separators) after a '?' (or after the sorted query and a '.', when the URL has a query). The
// header may hold several signatures separated by commas (one per auth token during a rotation).
// https://www.plivo.com/docs/voice/concepts/signature-validation
//
// Not the `plivo` SDK (4.79.0): its validateV3Signature is these lines, and the package brings
// 98 packages, 22 MB (the deprecated `request` among them) that take 270 ms to load.
import type { ParsedWebhook, PlivoCredentials, WebhookRequest, WebhookVerdict } from '../carrier.ts';
import { answeredByOf } from '../form-webhook.ts';
import { header, hmacBase64, sameSignature } from '../signing.ts';

/** The string Plivo signs for a POST to `url` with `params`, before the nonce. */
export function plivoSignedUrl(url: string, params: Record<string, string>): string {
  const parsed = new URL(url);
  const base = `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  const query = sortedPairs([...parsed.searchParams]).map(([key, value]) => `${key}=${value}`).join('&');
  const fields = sortedPairs(Object.entries(params)).map(([key, value]) => key + value).join('');
  if (query) return fields ? `${base}?${query}.${fields}` : `${base}?${query}`;
  if (fields) return `${base}?${fields}`;
  return base;
}

function sortedPairs(pairs: [string, string][]): [string, string][] {
  return [...pairs].sort((a, b) => (a[0] === b[0] ? compare(a[1], b[1]) : compare(a[0], b[0])));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function plivoSignature(authToken: string, url: string, nonce: string, params: Record<string, string>): string {
  return hmacBase64('sha256', authToken, `${plivoSignedUrl(url, params)}.${nonce}`);
}

export function verifyPlivoWebhook(request: WebhookRequest, credentials: PlivoCredentials): WebhookVerdict {
  const signatures = header(request.headers, 'x-plivo-signature-v3');
  const nonce = header(request.headers, 'x-plivo-signature-v3-nonce');
  if (!signatures || !nonce) return { ok: false, reason: 'no X-Plivo-Signature-V3 and X-Plivo-Signature-V3-Nonce headers' };
  let expected: string;
  try {
    expected = plivoSignature(credentials.authToken, request.url, nonce, request.params);
  } catch {
    return { ok: false, reason: 'the webhook URL does not parse' };
  }
  const matches = signatures.split(',').some((signature) => sameSignature(signature.trim(), expected));
  return matches ? { ok: true } : { ok: false, reason: 'X-Plivo-Signature-V3 does not match the URL and fields' };
}

const STATUS: Record<string, 'queued' | 'ringing' | 'answered' | 'busy' | 'no_answer' | 'failed' | 'completed'> = {
  ringing: 'ringing',
  'in-progress': 'answered',
  completed: 'completed',
  busy: 'busy',
  failed: 'failed',
  timeout: 'no_answer',
  'no-answer': 'no_answer',
  cancel: 'no_answer',
};

export function parsePlivoWebhook(body: unknown): ParsedWebhook {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, reason: 'the webhook has no form fields' };
  const params = body as Record<string, unknown>;
  const text = (key: string) => (typeof params[key] === 'string' && params[key] !== '' ? (params[key] as string) : undefined);
  const callId = text('CallUUID');
  if (!callId) return { ok: false, reason: 'the webhook has no CallUUID' };
  // The machine-detection callback carries Machine=true|false and no CallStatus. Plivo detects
  // while the call runs and never says when the greeting ends: a machine, not `machine_end`.
  const machine = text('Machine');
  const status = machine !== undefined ? 'answered' : STATUS[text('CallStatus') ?? ''];
  if (!status) return { ok: false, reason: `unknown CallStatus ${JSON.stringify(text('CallStatus') ?? null)}` };
  const answeredBy = machine !== undefined ? (machine === 'true' ? 'machine' : 'human') : answeredByOf(text('AnsweredBy'));
  const placementId = text('RequestUUID');
  return {
    ok: true,
    call: {
      callId,
      from: text('From') ?? '',
      to: text('To') ?? '',
      direction: text('Direction') === 'outbound' ? 'outbound' : 'inbound',
      status,
      ...(answeredBy ? { answeredBy } : {}),
      ...(placementId ? { placementId } : {}),
    },
  };
}
