// POST /v1/flows/{flow_id}/tools/{tool}/test-request: sends an http tool's request once, as a call
// in a session would send it (the account's secrets filled into its headers, the body signed with
// its tool_signing_secret, only to a public address unless the operator allowed private networks,
// no redirect, a bounded answer with the request's secrets taken out), with the arguments the
// designer gives; answers what came back and how long it took. The studio's "Send a test request"
// on an http tool's card. It costs no credits (no session, no provider); each account may send a
// few every few seconds, so it cannot be used to flood a service from this server.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { toolDefinition } from '../../flow/document-lookups.ts';
import type { FlowDocument } from '../../flow/types.ts';
import { AppError } from '../../errors.ts';
import { RateLimiter } from '../../http/rate-limiter.ts';
import { accountOf } from '../../http/services.ts';
import { ToolTestRequestBody, ToolTestRequestResult } from '../../protocol/api/flows.ts';
import type { Flow } from '../../store/store.ts';

const Params = z.object({ flow_id: z.string(), tool: z.string().max(200) });
const DEFAULT_TIMEOUT_MS = 5000;
/** Per account: five in any five seconds (a few tries in a row, then about one a second). */
const PER_WINDOW = 5;
const WINDOW_MS = 5000;

/** The tool as the state (or, with none named, the first state offering it, or the shared tools) defines it. */
function findTool(document: FlowDocument, tool: string, state: string | undefined) {
  if (state !== undefined) {
    if (!Object.hasOwn(document.states, state)) throw new AppError('invalid_request', `The flow has no state "${state}".`, [{ field: 'state', message: 'unknown state' }]);
    return toolDefinition(document, state, tool);
  }
  for (const name of Object.keys(document.states)) {
    const definition = toolDefinition(document, name, tool);
    if (definition) return definition;
  }
  return document.tools?.[tool];
}

export async function toolTestRequestRoutes(server: FastifyInstance, { ownFlow }: { ownFlow(accountId: string, id: string): Promise<Flow> }): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store, flowJobs, sendToolRequest: send } = app.services;
  const limiter = new RateLimiter(PER_WINDOW, WINDOW_MS);

  const admit = (accountId: string) => {
    const decision = limiter.take(accountId);
    if (!decision.allowed) {
      throw new AppError('rate_limited', `At most ${PER_WINDOW} test requests in ${WINDOW_MS / 1000} s per account; wait a moment.`, undefined, { 'retry-after': String(decision.retryAfterSeconds) });
    }
  };

  app.post(
    '/v1/flows/:flow_id/tools/:tool/test-request',
    { config: { auth: 'jwt_or_api_key' }, schema: { params: Params, body: ToolTestRequestBody, response: { 200: ToolTestRequestResult } } },
    async (request) => {
      const accountId = accountOf(request.principal);
      const { flow_id: flowId, tool } = request.params;
      // Counted first, before any work: a refusal costs nothing.
      admit(accountId);
      const flow = await ownFlow(accountId, flowId);
      const { body } = request;
      const yaml = body.draft ? ((await store.flowVersions.getDraft(accountId, flowId))?.yamlContent ?? flow.yamlContent) : flow.yamlContent;
      // Parsed in a flow worker, as every flow text is: never on the thread that paces audio.
      const document = await flowJobs.parseDocument(accountId, yaml);
      if (!document) throw new AppError('invalid_request', `The ${body.draft ? 'draft' : 'published version'} has errors: fix them first (they are listed with the flow).`);
      const definition = findTool(document, tool, body.state);
      if (!definition) throw new AppError('invalid_request', `The flow has no tool "${tool}"${body.state ? ` in the state "${body.state}"` : ''}.`, [{ field: 'tool', message: 'unknown tool' }]);
      const http = definition.http;
      if (!http) throw new AppError('invalid_request', `The tool "${tool}" has no http action: the model's own tools send no request.`, [{ field: 'tool', message: 'not an http tool' }]);
      const method = http.method ?? 'POST';
      const result = await send({
        accountId,
        url: http.url,
        method,
        headers: http.headers ?? {},
        // What a session's call sends (http-tools.ts toolRequestBody), with no session behind it.
        body: JSON.stringify({ tool, arguments: body.arguments, variables: body.variables, metadata: {}, session_id: 'test-request' }),
        timeoutMs: http.timeout_ms ?? DEFAULT_TIMEOUT_MS,
        signal: AbortSignal.timeout(60_000),
      });
      return result.ok
        ? { url: http.url, method, ok: true, status: result.status, body: result.body, duration_ms: Math.round(result.durationMs) }
        : { url: http.url, method, ok: false, status: result.status, error: result.error, duration_ms: Math.round(result.durationMs) };
    },
  );
}
