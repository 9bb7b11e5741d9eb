// The requests of flows' `http` tools (docs/flows.md#extended-flow-keys), sent for the engine: the
// account's secrets named in the headers are opened for this request only, the body is signed like
// a webhook (Standard Webhooks, with the account's `tool_signing_secret`), and the answer must be
// JSON within the tool's timeout. It is the same kind of request as a webhook (one an account
// points the server at) and connects through the same outbound-address guard
// (security/outbound-target.ts; --allow-private-webhooks covers both). No redirect is followed;
// the answer is bounded. Every secret the request carried is taken back out of the answer, and of
// any error made of it (security/secret-redaction.ts): a receiver that echoes the request would
// otherwise put them in the session's timeline, its detail, its webhooks and the studio.
import { request as httpRequest, type ClientRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { TOOL_SIGNING_SECRET, fillSecretReferences, secretReferences } from '../../flow/secret-references.ts';
import type { SendToolRequest, ToolRequestInput, ToolRequestResult } from '../http-tools.ts';
import { guardedLookup, literalTargetProblem } from '../../security/outbound-target.ts';
import { secretContext, type SecretBox } from '../../security/secret-box.ts';
import { secretRedactor, type SecretRedactor } from '../../security/secret-redaction.ts';
import { newWebhookMessageId, signWebhook } from '../../security/webhook-signature.ts';
import type { SecretsRepository } from '../../store/repositories/secrets.ts';

export interface ToolRequestOptions {
  secrets: SecretsRepository;
  box: SecretBox;
  allowPrivate: boolean;
  /** The longest answer read; a larger one is an error result. */
  maxAnswerBytes?: number;
}

const USER_AGENT = 'Voxflow-Tools/1';
export const MAX_TOOL_ANSWER_BYTES = 256 * 1024;

export function createToolRequestSender(options: ToolRequestOptions): SendToolRequest {
  return (input) => sendToolRequest(input, options);
}

/** The account's secrets a request needs, opened; names the account has none of are left out. */
async function openSecrets(options: ToolRequestOptions, accountId: string, names: ReadonlySet<string>): Promise<Map<string, string>> {
  const opened = new Map<string, string>();
  for (const stored of await options.secrets.sealed(accountId)) {
    if (!names.has(stored.name)) continue;
    try {
      opened.set(stored.name, options.box.open(stored.valueEnc, secretContext(accountId, stored.name)));
    } catch {
      // Sealed under another key (a data folder restored without its key): as if it were not set.
    }
  }
  return opened;
}

async function sendToolRequest(input: ToolRequestInput, options: ToolRequestOptions): Promise<ToolRequestResult> {
  const started = performance.now();
  const fail = (error: string, status: number | null = null): ToolRequestResult => ({ ok: false, status, error, durationMs: performance.now() - started });

  const needed = new Set([TOOL_SIGNING_SECRET, ...Object.values(input.headers).flatMap(secretReferences)]);
  const opened = await openSecrets(options, input.accountId, needed);
  const signing = opened.get(TOOL_SIGNING_SECRET);
  if (signing === undefined) {
    return fail(`requests are signed, and the account has no ${TOOL_SIGNING_SECRET}: set it with PUT /v1/secrets/${TOOL_SIGNING_SECRET}`);
  }
  const headers: Record<string, string> = {};
  const carried: string[] = [];
  const carriedHeaders: string[] = [];
  for (const [name, template] of Object.entries(input.headers)) {
    const { text, missing } = fillSecretReferences(template, (secret) => opened.get(secret));
    if (missing.length > 0) return fail(`the account has no secret named ${missing.join(', ')} (header ${name}); set it with PUT /v1/secrets/${missing[0]}`);
    headers[name.toLowerCase()] = text;
    const used = secretReferences(template);
    if (used.length > 0) {
      carried.push(...used.map((secret) => opened.get(secret)!));
      carriedHeaders.push(text);
    }
  }
  let signed;
  try {
    signed = signWebhook(signing, newWebhookMessageId(), input.body);
  } catch {
    return fail(`the account's ${TOOL_SIGNING_SECRET} is not a signing secret (whsec_ and base64)`);
  }
  return exchange(input, { ...headers, ...signed }, options, started, secretRedactor(carried, carriedHeaders));
}

function exchange(input: ToolRequestInput, headers: Record<string, string>, options: ToolRequestOptions, started: number, redact: SecretRedactor): Promise<ToolRequestResult> {
  const maxBytes = options.maxAnswerBytes ?? MAX_TOOL_ANSWER_BYTES;
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let request: ClientRequest | undefined;
    const onAbort = () => {
      request?.destroy();
      fail('the session ended');
    };
    type Settled = { ok: true; status: number; body: unknown } | { ok: false; status: number | null; error: string };
    const finish = (result: Settled) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      input.signal.removeEventListener('abort', onAbort);
      const clean = result.ok ? { ...result, body: redact.json(result.body) } : { ...result, error: redact.text(result.error) };
      resolve({ ...clean, durationMs: performance.now() - started });
    };
    const fail = (error: string, status: number | null = null) => finish({ ok: false, status, error });

    const target = new URL(input.url);
    // An IP literal is connected to without a lookup: it is checked here instead.
    const literal = literalTargetProblem(target, { allowPrivate: options.allowPrivate });
    if (literal) return fail(literal);
    const requestOptions: RequestOptions = {
      method: input.method,
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(input.body), 'user-agent': USER_AGENT },
      lookup: guardedLookup({ allowPrivate: options.allowPrivate }) as RequestOptions['lookup'],
    };
    request = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, requestOptions, (response) => {
      const status = response.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > maxBytes) {
          request?.destroy();
          return fail(`the answer is larger than ${maxBytes / 1024} KiB`, status);
        }
        chunks.push(chunk);
      });
      response.on('error', (error) => fail(error.message, status));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (status >= 300 && status < 400) return fail(`redirects are not followed (answered ${status})`, status);
        // Redacted before it is cut: a secret cut in two would no longer be found.
        const kept = redact.text(text.trim()).slice(0, 200);
        if (status < 200 || status >= 300) return fail(`answered ${status}${kept ? `: ${kept}` : ''}`, status);
        if (text.trim() === '') return finish({ ok: true, status, body: null });
        try {
          finish({ ok: true, status, body: JSON.parse(text) as unknown });
        } catch {
          fail('the answer is not JSON', status);
        }
      });
    });
    input.signal.addEventListener('abort', onAbort, { once: true });
    const sent = request;
    timer = setTimeout(() => {
      sent.destroy();
      fail(`no answer within ${input.timeoutMs} ms`);
    }, input.timeoutMs);
    sent.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') return fail('connection refused');
      if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return fail('the host name cannot be resolved');
      if (error.code === 'EPRIVATE') return fail(error.message);
      fail(error.message);
    });
    sent.end(input.body);
  });
}
