// One delivery attempt: a POST of the signed body to the endpoint, and what came of it. No
// redirect is followed (a 3xx is a failed attempt that names where it pointed), the answer's
// status must come within the timeout, and the receiver's body is not read beyond a little of a
// refusal's, for the deliveries list.
//
// The private-network check happens where the socket connects, on every attempt: a name that
// resolved to a public address when the endpoint was saved may resolve to 127.0.0.1 later (DNS
// rebinding), so the addresses are checked in the connection's own lookup.
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { guardedLookup, literalTargetProblem } from '../../security/outbound-target.ts';

export interface AttemptResult {
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** No answer within the timeout (the dispatcher shortens the next attempts' wait for such an endpoint). */
  timedOut?: boolean;
}

export interface SendOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  /** Aborts the attempt (server shutdown); it is then not recorded. */
  signal?: AbortSignal;
}

const USER_AGENT = 'Voxflow-Webhooks/1';
const KEPT_BODY_BYTES = 200;

function describe(error: unknown, timeoutMs: number, timedOut: boolean): string {
  if (timedOut) return `no answer within ${timeoutMs / 1000} s`;
  const code = (error as { code?: string }).code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the host name cannot be resolved';
  if (code === 'ECONNRESET') return 'the connection was reset';
  if (code === 'EPRIVATE') return (error as Error).message;
  return error instanceof Error ? error.message : String(error);
}

/** POSTs `body` with `headers`; resolves (never rejects) with what the receiver did. */
export function sendWebhook(url: string, body: string, headers: Record<string, string>, options: SendOptions): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  return new Promise((resolve) => {
    let settled = false;
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: Omit<AttemptResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed(), ...(timedOut ? { timedOut: true } : {}) });
    };
    const fail = (error: unknown) => finish({ delivered: false, statusCode: null, error: describe(error, options.timeoutMs, timedOut) });

    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return fail(new Error('the URL is not valid'));
    }
    // An IP literal is connected to without a lookup: it is checked here instead.
    const literal = literalTargetProblem(target, { allowPrivate: options.allowPrivate });
    if (literal) return fail(Object.assign(new Error(literal), { code: 'EPRIVATE' }));
    const requestOptions: RequestOptions = {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': USER_AGENT },
      lookup: guardedLookup({ allowPrivate: options.allowPrivate }) as RequestOptions['lookup'],
      signal: options.signal,
    };
    const request = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, requestOptions, (response) => {
      const status = response.statusCode ?? 0;
      // The status decides; a receiver's body is not waited for (one that never ends would turn a
      // 2xx into a timeout), only a little of a refusal's is kept for the deliveries list.
      if (status >= 200 && status < 300) {
        finish({ delivered: true, statusCode: status, error: null });
        response.destroy();
        return;
      }
      if (status >= 300 && status < 400) {
        const location = response.headers.location ?? '(no Location)';
        finish({ delivered: false, statusCode: status, error: `redirects are not followed (to ${location.slice(0, 200)})` });
        response.destroy();
        return;
      }
      const kept: Buffer[] = [];
      let keptBytes = 0;
      const refused = () => {
        const text = Buffer.concat(kept).toString('utf8').slice(0, KEPT_BODY_BYTES).replace(/\s+/g, ' ').trim();
        finish({ delivered: false, statusCode: status, error: `the receiver answered ${status}${text ? `: ${text}` : ''}` });
        response.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        kept.push(chunk);
        keptBytes += chunk.length;
        if (keptBytes >= KEPT_BODY_BYTES) refused();
      });
      response.on('end', refused);
      response.on('error', refused);
    });
    timer = setTimeout(() => {
      timedOut = true;
      request.destroy(new Error('timed out'));
    }, options.timeoutMs);
    request.on('error', fail);
    request.end(body);
  });
}
