// A flow's `http` tool as the engine runs it (docs/flows.md): the model's call, once the runtime has
// accepted it, is sent to the account's service as JSON, and the answer — or why there is none —
// goes back to the runtime and to the model. Sending (the network, the account's secrets and the
// signature) is injected: the engine layer neither holds secrets nor signs.
import type { HttpToolRequest, HttpToolResponse } from '../flow/runtime.ts';

export interface ToolRequestInput {
  accountId: string;
  url: string;
  method: 'POST' | 'PUT' | 'PATCH';
  /** As the flow wrote them: `{secret.NAME}` is the sender's to fill from the account's secrets. */
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** The session's lifetime: a session that ends abandons its requests. */
  signal: AbortSignal;
}

export type ToolRequestResult =
  | { ok: true; status: number; body: unknown; durationMs: number }
  | { ok: false; status: number | null; error: string; durationMs: number };

/** Sends one request and resolves with what came of it; never rejects. */
export type SendToolRequest = (input: ToolRequestInput) => Promise<ToolRequestResult>;

/** What an http tool's service receives: the call, the session's variables and its metadata. */
export function toolRequestBody(request: HttpToolRequest, sessionId: string, metadata: Record<string, unknown>): string {
  return JSON.stringify({
    tool: request.tool,
    arguments: request.arguments,
    variables: request.variables,
    metadata,
    session_id: sessionId,
  });
}

export interface HttpToolRun {
  response: HttpToolResponse;
  status: number | null;
  durationMs: number;
}

export async function runHttpTool(
  send: SendToolRequest | null,
  request: HttpToolRequest,
  session: { accountId: string; sessionId: string; metadata: Record<string, unknown>; signal: AbortSignal },
): Promise<HttpToolRun> {
  if (!send) return { response: { ok: false, error: 'this server cannot call http tools' }, status: null, durationMs: 0 };
  let result: ToolRequestResult;
  try {
    result = await send({
      accountId: session.accountId,
      url: request.url,
      method: request.method,
      headers: request.headers,
      body: toolRequestBody(request, session.sessionId, session.metadata),
      timeoutMs: request.timeoutMs,
      signal: session.signal,
    });
  } catch (error) {
    // A sender that throws is a bug, but the call must still go on with an error result.
    result = { ok: false, status: null, error: error instanceof Error ? error.message : String(error), durationMs: 0 };
  }
  const response: HttpToolResponse = result.ok ? { ok: true, body: result.body } : { ok: false, error: `the ${request.tool} service failed: ${result.error}` };
  return { response, status: result.status, durationMs: Math.round(result.durationMs) };
}
