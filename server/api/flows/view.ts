// GET /v1/flows/{id}/view: what the studio's canvas draws for the text it edits (the draft, else
// the published text) and the layout saved with the flow: the states' cards, the links, every
// state's place and every edge's route (server/flow/graph/view.ts). The studio fetches it beside
// the flow's text and draws the canvas from it before its own flow worker has parsed the text.
//
// - Made in the flow-job pool, never on this thread (at 500 states the parse, dagre's layout and
//   the edge routing take a worker hundreds of ms), as the JSON bytes sent: this thread neither
//   lays out nor serialises the view. The job counts against places of the account's own
//   (`view:<account>`), so opening a big flow in the studio never makes the account's uploads
//   wait for a place, and never the other way round.
// - The last views made are kept (VIEWS_KEPT, at most VIEW_BYTES_KEPT bytes of them), each with
//   the text and the stored layout it was made from: a view is served again only while both are
//   exactly those (a string comparison, no hash), so opening the same flow again costs no job.
// - A flow opened in the studio (its view is kept) has its view made again a moment after each
//   save of its text, layout, draft or published version (remakeSoon, VIEW_REMADE_AFTER_MS after
//   the last of a burst of saves): the designer who edits, leaves and comes back finds the view
//   of what was saved, instead of the server and the studio's worker both parsing it on the open.
//   A flow nobody opened costs no such job: an API client's uploads make no views.
// - A studio on the server's own machine waits for this view before its worker parses the text,
//   and parses it after drawing the canvas (renderer/src/features/editor/document/
//   flow-text.svelte.ts, `viewFirst`): the server's job and the worker parsing the same text side
//   by side on the same cores made a first open 8-28 % longer (alternated, 200 and 500 states).
// - A text that is not readable YAML has `view: null`: the studio then waits for its worker.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { FlowView } from '../../flow/graph/view.ts';
import type { Flow } from '../../store/store.ts';
import { accountOf } from '../../http/services.ts';
import { FlowViewRecord } from '../../protocol/api/flows.ts';

const FlowParams = z.object({ flow_id: z.string() });

/** Views kept, and their bytes with the texts they are of at most (a 500-state flow's view and text are about 1 MiB). */
const VIEWS_KEPT = 32;
const VIEW_BYTES_KEPT = 32 * 1024 * 1024;
/** The studio saves as the designer types: the view is made again once the saves have paused. */
const VIEW_REMADE_AFTER_MS = 2_000;

/** The view as this module sends it is the schema's (checked when this compiles). */
const _sameShape = (view: FlowView): z.infer<typeof FlowViewRecord>['view'] => view;
void _sameShape;

interface Kept {
  text: string;
  layout: string | null;
  etag: string;
  bytes: Buffer;
}

interface ViewHelpers {
  ownFlow(accountId: string, id: string): Promise<Flow>;
}

export interface FlowViews {
  /** After a save that changed what a flow's view shows: made again soon, if the flow's view is kept. */
  remakeSoon(accountId: string, flowId: string): void;
}

export async function flowViewRoutes(server: FastifyInstance, { ownFlow }: ViewHelpers): Promise<FlowViews> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store, flowJobs } = app.services;
  const config = { auth: 'jwt_or_api_key' as const };
  /** By account and flow, the least recently used first. */
  const kept = new Map<string, Kept>();
  let keptBytes = 0;
  /** Views being made, so that two opens of one flow at once make it once. */
  const making = new Map<string, Promise<Kept>>();

  const sizeOf = (view: Kept) => view.bytes.byteLength + view.text.length * 2 + (view.layout?.length ?? 0) * 2;
  const keep = (key: string, view: Kept) => {
    const before = kept.get(key);
    if (before) keptBytes -= sizeOf(before);
    kept.delete(key);
    kept.set(key, view);
    keptBytes += sizeOf(view);
    for (const [oldest, old] of kept) {
      if (kept.size <= VIEWS_KEPT && keptBytes <= VIEW_BYTES_KEPT) break;
      kept.delete(oldest);
      keptBytes -= sizeOf(old);
    }
  };

  const viewOf = async (accountId: string, flow: Flow, text: string, etag: string): Promise<Kept> => {
    const key = `${accountId}\u0000${flow.id}`;
    const same = (view: Kept | undefined) => view !== undefined && view.etag === etag && view.layout === flow.layout && view.text === text;
    const hit = kept.get(key);
    if (hit && same(hit)) {
      kept.delete(key);
      kept.set(key, hit);
      return hit;
    }
    const inFlight = making.get(key);
    if (inFlight) {
      const made = await inFlight;
      if (same(made)) return made;
    }
    const head = `${JSON.stringify({ flow_id: flow.id, etag }).slice(0, -1)},"view":`;
    const job = flowJobs.flowView(`view:${accountId}`, text, flow.layout, head, '}').then(({ viewJson }): Kept => {
      const bytes = Buffer.from(viewJson.buffer, viewJson.byteOffset, viewJson.byteLength);
      const view = { text, layout: flow.layout, etag, bytes };
      keep(key, view);
      return view;
    });
    making.set(key, job);
    try {
      return await job;
    } finally {
      if (making.get(key) === job) making.delete(key);
    }
  };

  /** The view of what the studio would open now: the draft, else the published text. */
  const currentView = async (accountId: string, flow: Flow): Promise<Kept> => {
    const draft = await store.flowVersions.getDraft(accountId, flow.id);
    return viewOf(accountId, flow, draft?.yamlContent ?? flow.yamlContent, draft?.etag ?? `v${flow.publishedVersion}`);
  };

  const remaking = new Map<string, NodeJS.Timeout>();
  server.addHook('onClose', async () => {
    for (const timer of remaking.values()) clearTimeout(timer);
    remaking.clear();
  });
  const remakeSoon = (accountId: string, flowId: string): void => {
    const key = `${accountId}\u0000${flowId}`;
    if (!kept.has(key)) return;
    clearTimeout(remaking.get(key));
    const timer = setTimeout(() => {
      remaking.delete(key);
      // Best effort: a flow deleted meanwhile, or the account's view places taken (429), leaves
      // the next open to make the view as it would have anyway.
      void (async () => currentView(accountId, await ownFlow(accountId, flowId)))().catch(() => undefined);
    }, VIEW_REMADE_AFTER_MS);
    timer.unref();
    remaking.set(key, timer);
  };

  app.get(
    '/v1/flows/:flow_id/view',
    {
      config,
      schema: {
        params: FlowParams,
        description: "What the studio's canvas draws for the flow's draft (else its published text) and its saved layout; `view` is null when the text is not readable YAML.",
        response: { 200: FlowViewRecord },
      },
    },
    async (request, reply) => {
      const accountId = accountOf(request.principal);
      const view = await currentView(accountId, await ownFlow(accountId, request.params.flow_id));
      // Bytes made in the worker, sent as they are (no serialising on this thread).
      return (reply as FastifyReply).type('application/json; charset=utf-8').header('cache-control', 'no-store').send(view.bytes);
    },
  );
  return { remakeSoon };
}
