// Flows: YAML documents validated by the shared flow model. Another account's flow is a 404.
// The model runs in the flow-job pool (server/jobs), never on this thread, which paces audio.
// The spec's writes keep their meaning (docs/flows.md#drafts): a new text is published at once as the
// next version. The studio's drafts, publishing and history are in versions.ts.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { hasErrors, type Diagnostic } from '../../flow/types.ts';
import type { Flow } from '../../store/store.ts';
import { accountOf } from '../../http/services.ts';
import { mediaBody, noBody } from '../../http/api-contract.ts';
import { FlowJson, FlowRecord, FlowSummary } from '../../protocol/api/flows.ts';
import { requireJsonBodyText } from '../../http/json-body.ts';
import { CreateFlowBody, UpdateFlowBody, type FlowLayout } from './schemas.ts';
import { assertFlowStorageLeft, newFlowBytesLeft, textBytes, withFlowStorageLeft } from './storage-quota.ts';
import { flowPipecatRoutes } from './pipecat.ts';
import { toolTestRequestRoutes } from './tool-test-requests.ts';
import { experimentRoutes } from './experiments.ts';
import { flowViewRoutes } from './view.ts';
import { authorOf, flowVersionRoutes } from './versions.ts';

export const FlowParams = z.object({ flow_id: z.string() });

/** The validator's answer for storing: a 422 with every diagnostic, or the warnings to return. */
function refuseErrors(diagnostics: Diagnostic[]): Diagnostic[] {
  if (hasErrors(diagnostics)) {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    const first = errors[0]!;
    throw new AppError(
      'invalid_flow',
      `The flow document has ${errors.length} ${errors.length === 1 ? 'error' : 'errors'}; the first, at line ${first.line}, column ${first.column}: ${first.message}`,
      diagnostics,
    );
  }
  return diagnostics;
}

function parseLayout(text: string | null): FlowLayout | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as FlowLayout;
  } catch {
    return null;
  }
}

function fullView(flow: Flow, diagnostics?: Diagnostic[]) {
  return {
    id: flow.id,
    name: flow.name,
    yaml_content: flow.yamlContent,
    layout: parseLayout(flow.layout),
    created_at: flow.createdAt,
    updated_at: flow.updatedAt,
    /** yaml_content is this version's text: what sessions started by the API run. */
    published_version: flow.publishedVersion,
    has_draft: flow.hasDraft,
    ...(diagnostics ? { diagnostics } : {}),
  };
}

/**
 * fullView's JSON, byte for byte what JSON.stringify would make of it, from the YAML already
 * quoted as a JSON string in UTF-8 by the flow worker (`yamlJson`): the thread that paces audio
 * then neither serialises nor encodes the hundreds of KiB of text, only copies them once.
 */
function fullViewBytes(flow: Flow, yamlJson: Uint8Array, diagnostics?: Diagnostic[]): Buffer {
  const { id, name, yaml_content: _quoted, ...rest } = fullView(flow, diagnostics);
  // `rest` always has `layout` (null or an object), so it is never `{}`.
  const head = `${JSON.stringify({ id, name }).slice(0, -1)},"yaml_content":`;
  const tail = `,${JSON.stringify(rest).slice(1)}`;
  return Buffer.concat([Buffer.from(head), yamlJson, Buffer.from(tail)]);
}

/** An answer already serialised as JSON (the type Fastify gives the objects it serialises). */
const sendJson = (reply: FastifyReply, bytes: Uint8Array) => reply.type('application/json; charset=utf-8').send(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));

export async function flowRoutes(server: FastifyInstance): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store, flowJobs } = app.services;
  const config = { auth: 'jwt_or_api_key' as const };
  /** Refused with 422 when it has errors; else its warnings and the document's own version string. */
  const validated = async (accountId: string, yamlText: string) => {
    const { diagnostics, documentVersion } = await flowJobs.inspect(accountId, yamlText);
    return { warnings: refuseErrors(diagnostics), documentVersion };
  };

  const ownFlow = async (accountId: string, id: string): Promise<Flow> => {
    const flow = await store.flows.get(accountId, id);
    if (!flow) throw new AppError('flow_not_found', `No flow with the id "${id}".`);
    return flow;
  };
  // The canvas's view of a flow (GET /v1/flows/{id}/view), made again after the saves below.
  const views = await flowViewRoutes(app, { ownFlow });

  // The body (up to 512 KiB, nearly all of it the YAML) stays bytes here: a flow worker decodes,
  // parses and checks it as the server's parser and this route's schema would (CreateFlowBody
  // documents it), and validates the YAML in the same job.
  app.post('/v1/flows', { config: { ...config, jsonBodyAsText: true }, schema: { body: CreateFlowBody, response: { 201: FlowRecord } } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    const sent = requireJsonBodyText(request.body);
    // A full account's uploads cost no validation (the job skips it past what the quota leaves);
    // the quota is checked again right before the write.
    const read = await flowJobs.readNewFlow(accountId, sent.bytes, sent.maxDepth, await newFlowBytesLeft(app.services, accountId));
    const { body } = read;
    const adding = { flows: 1, bytes: read.yamlBytes };
    await assertFlowStorageLeft(app.services, accountId, adding);
    const { warnings, documentVersion } = read.validated ? { warnings: refuseErrors(read.validated.diagnostics), documentVersion: read.validated.documentVersion } : await validated(accountId, body.yaml_content);
    const version = { documentVersion, createdBy: authorOf(request.principal) };
    const flow = await withFlowStorageLeft(app.services, accountId, adding, () =>
      store.flows.create({ accountId, name: body.name, yamlContent: body.yaml_content, version }),
    );
    return sendJson(reply.status(201), fullViewBytes(flow, read.yamlJson, warnings));
  });

  app.get('/v1/flows', { config, schema: { response: { 200: z.array(FlowSummary) } } }, async (request) => {
    return (await store.flows.list(accountOf(request.principal))).map((f) => ({ id: f.id, name: f.name, created_at: f.createdAt, updated_at: f.updatedAt }));
  });

  app.get('/v1/flows/:flow_id', { config, schema: { params: FlowParams, response: { 200: FlowRecord } } }, async (request) => {
    return fullView(await ownFlow(accountOf(request.principal), request.params.flow_id));
  });

  // Added to the spec's endpoints (docs/flows.md): the YAML editor saves text with its comments.
  app.put('/v1/flows/:flow_id', { config, schema: { params: FlowParams, body: UpdateFlowBody, response: { 200: FlowRecord } } }, async (request) => {
    const accountId = accountOf(request.principal);
    const stored = await ownFlow(accountId, request.params.flow_id);
    const { body } = request;
    const checked = body.yaml_content !== undefined ? await validated(accountId, body.yaml_content) : undefined;
    const layout = body.layout === undefined ? undefined : body.layout === null ? null : JSON.stringify(body.layout);
    // The live text sent again unchanged is no new version (a client that saves what it read).
    const yamlContent = body.yaml_content === stored.yamlContent ? undefined : body.yaml_content;
    const version = checked ? { documentVersion: checked.documentVersion, createdBy: authorOf(request.principal) } : undefined;
    const flow = await withFlowStorageLeft(app.services, accountId, { bytes: textBytes(yamlContent) }, () =>
      store.flows.update(accountId, request.params.flow_id, { name: body.name, yamlContent, layout, version }),
    );
    const warnings = checked?.warnings;
    if (!flow) throw new AppError('flow_not_found');
    if (yamlContent !== undefined || layout !== undefined) views.remakeSoon(accountId, flow.id);
    return fullView(flow, warnings);
  });

  app.delete('/v1/flows/:flow_id', { config, schema: { params: FlowParams, response: { 204: noBody('Deleted, with its versions and tests') } } }, async (request, reply) => {
    // A number still bound to the flow would take calls with nothing to answer them.
    const bound = (await store.phoneNumbers.list(accountOf(request.principal))).filter((n) => n.flowId === request.params.flow_id).map((n) => n.number);
    if (bound.length > 0) throw new AppError('flow_in_use', `Phone numbers still answer with this flow (${bound.join(', ')}): delete them or bind them to another flow first.`);
    const deleted = await store.flows.delete(accountOf(request.principal), request.params.flow_id);
    if (!deleted) throw new AppError('flow_not_found', `No flow with the id "${request.params.flow_id}".`);
    return reply.status(204).send();
  });

  // The document itself as JSON, for the visual editor.
  // Made as UTF-8 bytes in the worker and sent as they are: no object tree or text copied back to this thread.
  app.get('/v1/flows/:flow_id/json', { config, schema: { params: FlowParams, response: { 200: mediaBody('The published document as JSON', ['application/json'], FlowJson) } } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    return sendJson(reply, await flowJobs.toJsonBytes(accountId, (await ownFlow(accountId, request.params.flow_id)).yamlContent));
  });

  // The JSON is applied onto the stored YAML, keeping comments and key order where content is unchanged.
  // The body stays text until the worker parses it (http/json-body.ts): up to 512 KiB of objects.
  app.put('/v1/flows/:flow_id/json', { config: { ...config, jsonBodyAsText: true }, schema: { params: FlowParams, description: 'The body is the flow document as a JSON object (checked by the flow validator in a worker).', response: { 200: FlowRecord } } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    const stored = await ownFlow(accountId, request.params.flow_id);
    const body = requireJsonBodyText(request.body);
    const edited = await flowJobs.applyJsonText(accountId, stored.yamlContent, body.bytes, body.maxDepth);
    const warnings = refuseErrors(edited.diagnostics);
    const yamlContent = edited.yaml === stored.yamlContent ? undefined : edited.yaml;
    const version = { documentVersion: edited.documentVersion, createdBy: authorOf(request.principal) };
    const flow = await withFlowStorageLeft(app.services, accountId, { bytes: textBytes(yamlContent) }, () =>
      store.flows.update(accountId, stored.id, { yamlContent, version }),
    );
    if (!flow) throw new AppError('flow_not_found');
    if (yamlContent !== undefined) views.remakeSoon(accountId, flow.id);
    // The stored text is the edit's (an unchanged text is the same text), so its quoted form is
    // the worker's; unless another request changed the flow in between.
    return flow.yamlContent === edited.yaml ? sendJson(reply, fullViewBytes(flow, edited.yamlJson, warnings)) : fullView(flow, warnings);
  });

  await flowVersionRoutes(app, { ownFlow, fullView, refuseErrors, views });
  await flowPipecatRoutes(app, { ownFlow });
  await toolTestRequestRoutes(app, { ownFlow });
  await experimentRoutes(app, { ownFlow });
}
