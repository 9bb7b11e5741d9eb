// The carriers' REST calls: one request helper over fetch, under the providers' retry policy
// (a timeout per attempt; 5xx, 429, timeouts and resets retried with backoff; 4xx not).
// Credentials go only into the Authorization header and never into an error message or a log.
import { withRetry } from '../../providers/retry.ts';
import type { RestOptions } from './carrier.ts';

const DEFAULTS = { timeoutMs: 10_000, retries: 2, backoffMs: 250 } as const;

/** An HTTP answer that was not a success; `status` is what the retry policy classifies. */
export class CarrierHttpError extends Error {
  override name = 'CarrierHttpError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface CarrierRequest {
  carrier: string;
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  authorization: string;
  /** Sent as application/x-www-form-urlencoded. */
  form?: URLSearchParams;
  /** Sent as application/json. */
  json?: unknown;
  /** Statuses that count as success besides 2xx (a hang-up of a call already over: 404). */
  alsoFine?: readonly number[];
}

/** Returns the parsed JSON body (null when empty or for an accepted `alsoFine` status). */
export async function carrierRequest(request: CarrierRequest, options: RestOptions): Promise<unknown> {
  return withRetry(
    async (signal) => {
      const headers: Record<string, string> = { authorization: request.authorization, accept: 'application/json' };
      let body: string | undefined;
      if (request.form) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        body = request.form.toString();
      } else if (request.json !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(request.json);
      }
      const response = await fetch(request.url, { method: request.method, headers, body, signal });
      const text = await response.text();
      if (request.alsoFine?.includes(response.status)) return null;
      if (!response.ok) throw new CarrierHttpError(response.status, `${request.method} ${pathOf(request.url)} answered ${response.status}: ${excerpt(text)}`);
      return text.length === 0 ? null : (JSON.parse(text) as unknown);
    },
    {
      provider: request.carrier,
      signal: options.signal,
      timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
      retries: options.retries ?? DEFAULTS.retries,
      backoffMs: options.backoffMs ?? DEFAULTS.backoffMs,
    },
  );
}

export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}

export function apiUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

/** The path only: account ids sit in it, but never a key, and the host adds nothing. */
function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '(bad URL)';
  }
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}
