// Drafts, versions and publishing (docs/flows.md#drafts). The studio edits a draft, which may have
// errors (it is work in progress) but cannot be published with them; Publish makes it the next
// version, and an old version is rolled back to by publishing it again as a new one, so the
// history only ever grows and says what ran when.
//
// Two windows on one draft: every draft answer carries an ETag; a write with If-Match that is
// no longer current is refused with 412 draft_conflict, whose details carry the current tag, so
// a client can reload or deliberately overwrite ("keep mine") with it. A write without If-Match
// is last-writer-wins, as in HTTP (scripts that do not care).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import type { Diagnostic } from '../../flow/types.ts';
import type { Principal, Services } from '../../http/services.ts';
import { accountOf } from '../../http/services.ts';
import { noBody } from '../../http/api-contract.ts';
import { optionalBody } from '../../http/validation.ts';
import { DraftRecord, FlowRecord, FlowVersionRecord, FlowVersionSummary as FlowVersionSummaryView, PublishedVersion } from '../../protocol/api/flows.ts';
import { textBytes, withFlowStorageLeft } from './storage-quota.ts';
import type { Flow, FlowDraft, FlowVersion, FlowVersionSummary, PublishResult, VersionAuthor } from '../../store/store.ts';
import type { FlowViews } from './view.ts';


const yamlContent = z.string({ error: 'must be the YAML document as a string' });
const DraftBody = z.object({ yaml_content: yamlContent });
const PublishBody = optionalBody(z.object({ note: z.string({ error: 'note must be text' }).trim().max(500, 'at most 500 characters').optional() }));
const VersionNumber = z.coerce.number({ error: 'must be a version number' }).int('must be a whole number').min(1, 'versions start at 1');
const FlowParams = z.object({ flow_id: z.string() });
const VersionParams = z.object({ flow_id: z.string(), number: VersionNumber });

/** Who is writing: the studio signs in with a JWT; a backend uses an API key. */
export function authorOf(principal: Principal | null): VersionAuthor | null {
  if (principal?.kind === 'api_key') return { kind: 'api_key', apiKeyId: principal.apiKeyId };
  if (principal?.kind === 'jwt') return { kind: 'studio' };
  return null;
}

function authorView(author: VersionAuthor | null) {
  if (!author) return null;
  return author.kind === 'api_key' ? { kind: 'api_key' as const, api_key_id: author.apiKeyId } : { kind: 'studio' as const };
}

function versionSummaryView(version: FlowVersionSummary, published: number) {
  return {
    number: version.number,
    document_version: version.documentVersion,
    note: version.note,
    created_at: version.createdAt,
    created_by: authorView(version.createdBy),
    published: version.number === published,
  };
}

function versionView(version: FlowVersion, published: number) {
  return { ...versionSummaryView(version, published), yaml_content: version.yamlContent };
}

/** An entity tag as HTTP quotes it; If-Match may list several, weak or strong, or `*`. */
const quoted = (etag: string) => `"${etag}"`;
function ifMatchOf(request: FastifyRequest, current: string | null): string | undefined {
  const header = request.headers['if-match'];
  if (header === undefined || header.trim() === '') return undefined;
  const tags = header.split(',').map((tag) => tag.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1'));
  if (tags.includes('*')) return undefined;
  // One of several listed tags that is current counts as that one.
  return current !== null && tags.includes(current) ? current : tags[0]!;
}

function conflict(currentEtag: string, draft: FlowDraft | null): AppError {
  const details = [{ current_etag: currentEtag, draft_updated_at: draft?.updatedAt ?? null }];
  const message = draft
    ? 'The draft was saved elsewhere (another window or person) since you opened it: reload it to see those changes, or save again over them to keep yours.'
    : 'What you opened is no longer current (a version was published, or the draft was discarded elsewhere): reload it, or save again to keep yours.';
  return new AppError('draft_conflict', message, details);
}

/**
 * An old version published again as the newest one (a copy): a rollback, or an experiment's
 * winner concluded (experiments.ts). A copy of the old text counts against the storage quota.
 */
export function publishAgain(services: Services, accountId: string, flowId: string, version: FlowVersion, note: string, author: VersionAuthor | null): Promise<PublishResult> {
  return withFlowStorageLeft(services, accountId, { bytes: textBytes(version.yamlContent) }, () =>
    services.store.flowVersions.publish(accountId, flowId, { yamlContent: version.yamlContent, documentVersion: version.documentVersion, note, createdBy: author }),
  );
}

interface FlowHelpers {
  ownFlow(accountId: string, id: string): Promise<Flow>;
  fullView(flow: Flow, diagnostics?: Diagnostic[]): z.infer<typeof FlowRecord>;
  /** A 422 with every diagnostic when there are errors; else the warnings. */
  refuseErrors(diagnostics: Diagnostic[]): Diagnostic[];
  /** The studio's view of a flow, made again after a save changes the text it opens (view.ts). */
  views: FlowViews;
}

export async function flowVersionRoutes(server: FastifyInstance, { ownFlow, fullView, refuseErrors, views }: FlowHelpers): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store, flowJobs } = app.services;
  const config = { auth: 'jwt_or_api_key' as const };

  /**
   * What the studio edits: the draft, or (no draft yet) the published text, which the first
   * save turns into a draft. `is_draft` says which; `based_on_version` is the version the draft
   * started from, so the studio can say when a newer one was published meanwhile.
   */
  const draftView = (flow: Flow, draft: FlowDraft | null, diagnostics?: Diagnostic[]) => ({
    flow_id: flow.id,
    yaml_content: draft?.yamlContent ?? flow.yamlContent,
    is_draft: draft !== null,
    based_on_version: draft?.baseVersion ?? flow.publishedVersion,
    published_version: flow.publishedVersion,
    updated_at: draft?.updatedAt ?? flow.updatedAt,
    etag: draft?.etag ?? `v${flow.publishedVersion}`,
    ...(diagnostics ? { diagnostics } : {}),
  });

  const sendDraft = (reply: FastifyReply, view: ReturnType<typeof draftView>) => reply.header('etag', quoted(view.etag)).header('cache-control', 'no-store').send(view);

  const draftResponse = { 200: DraftRecord.describe('The draft, its ETag also in the ETag header') };
  app.get('/v1/flows/:flow_id/draft', { config, schema: { params: FlowParams, response: draftResponse } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    return sendDraft(reply, draftView(flow, await store.flowVersions.getDraft(accountId, flow.id)));
  });

  // Saved with errors too (it is a draft): the diagnostics come back, Publish refuses them.
  app.put('/v1/flows/:flow_id/draft', { config, schema: { params: FlowParams, body: DraftBody, response: draftResponse } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    const flowId = request.params.flow_id;
    await ownFlow(accountId, flowId);
    const { body } = request;
    // Checked before the flow job too, not only in the write: a conflict costs no job.
    const current = await store.flowVersions.currentEtag(accountId, flowId);
    const ifMatch = ifMatchOf(request, current);
    if (ifMatch !== undefined && current !== null && ifMatch !== current) throw conflict(current, await store.flowVersions.getDraft(accountId, flowId));
    const { diagnostics } = await flowJobs.inspect(accountId, body.yaml_content);
    const growth = async () => ({ bytes: textBytes(body.yaml_content) - textBytes((await store.flowVersions.getDraft(accountId, flowId))?.yamlContent) });
    const saved = await withFlowStorageLeft(app.services, accountId, growth, () => store.flowVersions.saveDraft(accountId, flowId, body.yaml_content, ifMatch));
    if (!saved.ok) {
      if (saved.reason === 'not_found') throw new AppError('flow_not_found', `No flow with the id "${flowId}".`);
      throw conflict(saved.currentEtag, await store.flowVersions.getDraft(accountId, flowId));
    }
    views.remakeSoon(accountId, flowId);
    return sendDraft(reply, draftView(await ownFlow(accountId, flowId), saved.draft, diagnostics));
  });

  // Discards the unpublished changes; the published version is untouched. Idempotent.
  app.delete('/v1/flows/:flow_id/draft', { config, schema: { params: FlowParams, response: { 204: noBody('Discarded (or there was none)') } } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    const flowId = request.params.flow_id;
    await ownFlow(accountId, flowId);
    const discarded = await store.flowVersions.discardDraft(accountId, flowId, ifMatchOf(request, await store.flowVersions.currentEtag(accountId, flowId)));
    if (!discarded.ok) {
      if (discarded.reason === 'not_found') throw new AppError('flow_not_found', `No flow with the id "${flowId}".`);
      throw conflict(discarded.currentEtag, await store.flowVersions.getDraft(accountId, flowId));
    }
    views.remakeSoon(accountId, flowId);
    return reply.status(204).send();
  });

  // The draft becomes version n+1 and is live at once; the draft is gone (nothing unpublished).
  app.post('/v1/flows/:flow_id/publish', { config, schema: { params: FlowParams, body: PublishBody, response: { 201: PublishedVersion } } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    const flowId = request.params.flow_id;
    await ownFlow(accountId, flowId);
    const { body } = request;
    const draft = await store.flowVersions.getDraft(accountId, flowId);
    // If-Match: publish exactly the draft this window shows, not one saved over it elsewhere.
    const current = (await store.flowVersions.currentEtag(accountId, flowId))!;
    const ifMatch = ifMatchOf(request, current);
    if (ifMatch !== undefined && ifMatch !== current) throw conflict(current, draft);
    if (!draft) throw new AppError('no_draft');
    const { diagnostics, documentVersion } = await flowJobs.inspect(accountId, draft.yamlContent);
    const warnings = refuseErrors(diagnostics);
    // The draft validated is the draft published: saved over meanwhile, the publish is refused.
    const published = await store.flowVersions.publish(
      accountId,
      flowId,
      { yamlContent: draft.yamlContent, documentVersion, note: body.note ?? '', createdBy: authorOf(request.principal) },
      { fromDraft: true, expectEtag: draft.etag },
    );
    if (published.ok) views.remakeSoon(accountId, flowId);
    return reply.status(201).send(await publishedView(accountId, flowId, published, warnings));
  });

  app.get('/v1/flows/:flow_id/versions', { config, schema: { params: FlowParams, response: { 200: z.array(FlowVersionSummaryView) } } }, async (request) => {
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    const versions = await store.flowVersions.list(accountId, flow.id) ?? [];
    return versions.map((version) => versionSummaryView(version, flow.publishedVersion));
  });

  const ownVersion = async (request: FastifyRequest & { params: z.infer<typeof VersionParams> }): Promise<{ flow: Flow; version: FlowVersion }> => {
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    const { number } = request.params;
    const version = await store.flowVersions.get(accountId, flow.id, number);
    if (!version) throw new AppError('flow_version_not_found', `This flow has no version ${number}; GET /v1/flows/${flow.id}/versions lists them.`);
    return { flow, version };
  };

  app.get('/v1/flows/:flow_id/versions/:number', { config, schema: { params: VersionParams, response: { 200: FlowVersionRecord } } }, async (request) => {
    const { flow, version } = await ownVersion(request);
    return versionView(version, flow.publishedVersion);
  });

  // Rollback: an old version published again becomes the newest version (a copy), so the
  // history says it happened. The draft, if any, is kept: it is someone's unfinished work.
  app.post('/v1/flows/:flow_id/versions/:number/publish', { config, schema: { params: VersionParams, body: PublishBody, response: { 201: PublishedVersion } } }, async (request, reply) => {
    const { flow, version } = await ownVersion(request);
    const accountId = flow.accountId;
    const { body } = request;
    const note = body.note || `Published again from version ${version.number}`;
    const published = await publishAgain(app.services, accountId, flow.id, version, note, authorOf(request.principal));
    if (published.ok) views.remakeSoon(accountId, flow.id);
    return reply.status(201).send(await publishedView(accountId, flow.id, published));
  });

  async function publishedView(accountId: string, flowId: string, result: Awaited<ReturnType<typeof store.flowVersions.publish>>, warnings?: Diagnostic[]) {
    if (!result.ok) {
      if (result.reason === 'conflict') throw conflict(result.currentEtag, await store.flowVersions.getDraft(accountId, flowId));
      if (result.reason === 'no_draft') throw new AppError('no_draft');
      throw new AppError('flow_not_found', `No flow with the id "${flowId}".`);
    }
    const flow = await ownFlow(accountId, flowId);
    return { version: versionView(result.version, flow.publishedVersion), flow: fullView(flow, warnings) };
  }
}
