// POST /v1/sessions starts a voice session from a backend (API key only) and hands back a
// one-connection token and the WebSocket URL for the browser; GET lists the latest ones.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { checkFirstMinute } from '../../billing/admission.ts';
import { effectiveRatePerMinute } from '../../billing/provider-choice.ts';
import { newSessionToken } from '../../security/opaque-tokens.ts';
import type { Session, SessionFilter } from '../../store/store.ts';
import { accountOf } from '../../http/services.ts';
import { mediaBody, noBody } from '../../http/api-contract.ts';
import { optionalBody } from '../../http/validation.ts';
import { CreatedSession, SessionDetail, SessionEventsPage, SessionView } from '../../protocol/api/sessions.ts';
import { wavToSend } from '../../outcomes/recording.ts';
import { recordingsDir } from '../../outcomes/retention.ts';
import { recordingFormat, sessionDetail, sessionListItem } from '../../outcomes/session-detail.ts';

// The list item's shape lives with the detail it opens (outcomes/), which webhooks send too.
export { sessionListItem };

const MAX_OBJECT_BYTES = 16 * 1024;
const smallObject = (what: string) =>
  z
    .record(z.string(), z.unknown(), { error: `${what} must be a JSON object` })
    .refine((value) => Buffer.byteLength(JSON.stringify(value)) <= MAX_OBJECT_BYTES, { message: `${what} must be at most 16 KiB as JSON` });

const CreateSessionBody = optionalBody(z.object({
  flow_id: z.string().min(1).max(200).nullish(),
  context: smallObject('context').optional(),
  metadata: smallObject('metadata').optional(),
  /** Record the call, caller left and agent right (docs/api.md#what-a-call-leaves-behind). */
  record: z.boolean({ error: 'record must be true or false' }).optional(),
}));

const EventsQuery = z.object({
  after: z.coerce.number({ error: 'after must be a number' }).int().min(0).default(0),
  limit: z.coerce.number({ error: 'limit must be a number' }).int().min(1).max(500, 'limit is at most 500').default(100),
});

const SessionParams = z.object({ session_id: z.string() });

/** A time as Unix seconds or an ISO 8601 date or date-time (a date alone is midnight UTC). */
export const instant = (name: string) =>
  z
    .string()
    .max(40, `${name} is at most 40 characters`)
    .transform((text, ctx) => {
      const seconds = /^\d+(\.\d+)?$/.test(text) ? Number(text) : /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) / 1000 : NaN;
      if (!Number.isFinite(seconds)) {
        ctx.addIssue({ code: 'custom', message: `${name} must be Unix seconds or an ISO 8601 date or date-time (2026-11-28T09:00:00Z)` });
        return z.NEVER;
      }
      return seconds;
    })
    .optional();

/** GET /v1/sessions' filters (docs/api.md#listing-and-searching-sessions): each optional, all applied together. */
const ListQuery = z.object({
  q: z.string().trim().min(1, 'q must not be empty').max(200, 'q is at most 200 characters').optional(),
  flow_id: z.string().min(1, 'flow_id must not be empty').max(200, 'flow_id is at most 200 characters').optional(),
  version: z
    .union([z.literal('draft'), z.string().regex(/^[1-9]\d{0,8}$/).transform(Number)], { error: 'version must be a version number or "draft"' })
    .optional(),
  status: z.enum(['created', 'connected', 'ended', 'expired'], { error: 'status must be one of created, connected, ended, expired' }).optional(),
  end_reason: z.string().min(1, 'end_reason must not be empty').max(100, 'end_reason is at most 100 characters').optional(),
  created_from: instant('created_from'),
  created_before: instant('created_before'),
  from_number: z
    .string()
    .regex(/^\+?\d{1,16}$/, 'from_number must be digits of a phone number (part of one will do), with or without its leading +')
    .optional(),
  success: z.enum(['true', 'false', 'unknown'], { error: 'success must be one of true, false, unknown' }).optional(),
});

/** A call's success as the API shows it: true, false, 'unknown', or null (not analysed, or its flow declares no criteria). */
function successValue(stored: 'true' | 'false' | 'unknown' | undefined): boolean | 'unknown' | null {
  return stored === undefined ? null : stored === 'unknown' ? 'unknown' : stored === 'true';
}

/** `wss://` behind TLS: the scheme follows the configured public URL. */
export function webSocketUrl(publicUrl: string, path: string): string {
  return publicUrl.replace(/^http(s?):/i, 'ws$1:') + path;
}

export async function sessionRoutes(server: FastifyInstance): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store, config } = app.services;

  // Its handler reads the store before anything else: the API key rides on those reads.
  app.post('/v1/sessions', { config: { auth: 'api_key', keyCheckedWithFirstRead: true }, schema: { body: CreateSessionBody, response: { 200: CreatedSession } } }, async (request) => {
    const accountId = accountOf(request.principal);
    // A draining node (docs/hosting.md#monitoring, Readiness) mints no token its engine would refuse; behind a
    // load balancer the retry lands on a node that takes calls.
    if (app.services.engine.shuttingDown) throw new AppError('at_capacity', 'This server is shutting down and takes no new sessions; try again in a moment.', undefined, { 'retry-after': '1' });
    const { body } = request;
    const flowId = body.flow_id ?? null;
    // The four reads at once, in one statement on PostgreSQL (the API key's check rides on it)
    // and from what is kept beside the store's worker on sql.js: this request is every call's
    // first. The flow's absence is still the error told first. A running experiment gives the
    // session its arm now, sticky on metadata.caller_id when given (for a missing flow there is none).
    const { flowFound, balance: credits, providers, experiment: running } = await store.sessions.startReads(accountId, flowId);
    if (!flowFound) throw new AppError('flow_not_found', `No flow with the id "${flowId}".`);
    const experiment = app.services.engine.armOf(running, body.metadata?.caller_id);

    const credit = checkFirstMinute(credits, effectiveRatePerMinute(config, providers));
    if (!credit.ok) throw new AppError('insufficient_credits', credit.message);
    const balance = credit.balance;

    const { token, prefix, hash } = newSessionToken();
    await store.sessions.create({
      accountId,
      flowId,
      experiment,
      tokenHash: hash,
      tokenPrefix: prefix,
      transport: 'websocket',
      mode: flowId ? 'flow' : 'assistant',
      context: body.context ?? {},
      metadata: body.metadata ?? {},
      expiresAt: Date.now() / 1000 + config.limits.sessionTokenTtlSeconds,
      apiKeyId: request.principal?.kind === 'api_key' ? request.principal.apiKeyId : null,
      record: body.record ?? false,
    });
    return {
      session_token: token,
      ws_url: webSocketUrl(app.services.publicUrl(), `/v1/ws/${token}`),
      transport: 'websocket' as const,
      credits_remaining: balance,
      experiment_id: experiment?.id ?? null,
      experiment_arm: experiment?.arm ?? null,
    };
  });

  // The latest sessions, narrowed by the filters given: a text search reads the final transcript
  // lines of the account's newest sessions that pass the other filters (bounded in the store).
  app.get('/v1/sessions', { config: { auth: 'jwt_or_api_key' }, schema: { querystring: ListQuery, response: { 200: z.array(SessionView) } } }, async (request) => {
    const query = request.query;
    const filter: SessionFilter = {
      ...(query.q !== undefined && { text: query.q }),
      ...(query.flow_id !== undefined && { flowId: query.flow_id }),
      ...(query.version !== undefined && { version: query.version }),
      ...(query.status !== undefined && { status: query.status }),
      ...(query.end_reason !== undefined && { endReason: query.end_reason }),
      ...(query.created_from !== undefined && { createdFrom: query.created_from }),
      ...(query.created_before !== undefined && { createdBefore: query.created_before }),
      ...(query.from_number !== undefined && { fromNumber: query.from_number }),
      ...(query.success !== undefined && { success: query.success }),
    };
    const now = Date.now() / 1000;
    const sessions = await store.sessions.listRecent(accountOf(request.principal), config.limits.sessionsListed, filter, now);
    // Each call's success (docs/api.md#outcome-and-success), read for the page in one look.
    const ids = sessions.map((session) => session.id);
    const [success, outcomes] = await Promise.all([store.analyses.successOf(ids), store.analyses.outcomesOf(ids)]);
    return sessions.map((session) => ({ ...sessionListItem(session, now), success: successValue(success.get(session.id)), outcome: outcomes.get(session.id) ?? null }));
  });

  /** Another account's session reads as absent. */
  const ownSession = async (accountId: string, id: string): Promise<Session> => {
    const session = await store.sessions.findById(id);
    if (!session || session.accountId !== accountId) throw new AppError('session_not_found', `No session with the id "${id}".`);
    return session;
  };

  // What the call produced (docs/api.md#what-a-call-leaves-behind), from its stored timeline.
  app.get('/v1/sessions/:session_id', { config: { auth: 'jwt_or_api_key' }, schema: { params: SessionParams, response: { 200: SessionDetail } } }, async (request) => {
    const session = await ownSession(accountOf(request.principal), request.params.session_id);
    return sessionDetail(store, session, app.services.publicUrl());
  });

  // The recording, with range requests so a player can seek (one range per request).
  const recording = ['audio/wav', 'audio/ogg; codecs=opus'];
  const recordingResponses = {
    200: mediaBody('The whole recording: caller left, agent right', recording, z.string().meta({ format: 'binary' })),
    206: mediaBody('The range asked for', recording, z.string().meta({ format: 'binary' })),
    416: noBody('The range is outside the recording (Content-Range says its size)'),
  };
  app.get('/v1/sessions/:session_id/recording', { config: { auth: 'jwt_or_api_key' }, schema: { params: SessionParams, response: recordingResponses } }, async (request, reply) => {
    const session = await ownSession(accountOf(request.principal), request.params.session_id);
    if (!session.recordingFile || /[/\\]/.test(session.recordingFile)) throw new AppError('recording_not_found');
    const path = join(recordingsDir(config.dataDir), session.recordingFile);
    let size: number;
    let wav: Awaited<ReturnType<typeof wavToSend>>;
    try {
      size = (await stat(path)).size;
      // A live call's WAV is sent as what exists so far: whole frames, under a header that says
      // their length (the file's own claims the longest WAV until the call ends).
      wav = recordingFormat(session.recordingFile) === 'audio/wav' ? await wavToSend(path, size) : null;
    } catch {
      throw new AppError('recording_not_found');
    }
    if (wav === 'starting') {
      void reply.header('retry-after', '1');
      throw new AppError('recording_starting');
    }
    if (wav) size = wav.size;
    reply.header('content-type', recordingFormat(session.recordingFile)).header('accept-ranges', 'bytes').header('cache-control', 'private, no-store');
    const range = byteRange(request.headers.range, size);
    if (range === 'bad') return reply.status(416).header('content-range', `bytes */${size}`).send();
    // A live call's recording grows while it is read: send exactly the bytes the length promised,
    // or the client stops reading at content-length and the connection is left mid-body (a
    // server closing then waits for its keep-alive to time out).
    if (range === null) return reply.header('content-length', size).send(size === 0 ? Buffer.alloc(0) : recordingBytes(path, wav?.header ?? null, 0, size - 1));
    return reply
      .status(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${size}`)
      .header('content-length', range.end - range.start + 1)
      .send(recordingBytes(path, wav?.header ?? null, range.start, range.end));
  });

  // The raw timeline, a page at a time: `after` is the last seq the caller has.
  app.get('/v1/sessions/:session_id/events', { config: { auth: 'jwt_or_api_key' }, schema: { params: SessionParams, querystring: EventsQuery, response: { 200: SessionEventsPage } } }, async (request) => {
    const session = await ownSession(accountOf(request.principal), request.params.session_id);
    const { query } = request;
    const page = await store.timelines.page(session.id, query.after, query.limit);
    return {
      events: page.map((entry) => ({ seq: entry.seq, at: entry.at, type: entry.type, event: JSON.parse(entry.data) as unknown })),
      next_after: page.length === query.limit ? page[page.length - 1]!.seq : null,
    };
  });
}

/**
 * Bytes [start, end] of a recording, its first ones taken from `header` when given instead of the
 * file. The header and the file's stream go through one PassThrough: as Readable.from() over an
 * async generator that yielded the header and then the file's stream, the body sometimes never
 * ended after its last byte, and the response (and the server's close) waited for it a minute.
 */
function recordingBytes(path: string, header: Buffer | null, start: number, end: number): Buffer | Readable {
  if (!header || start >= header.length) return createReadStream(path, { start, end });
  const head = header.subarray(start, Math.min(end + 1, header.length));
  if (end < header.length) return head;
  const body = new PassThrough();
  body.write(head);
  const file = createReadStream(path, { start: header.length, end });
  file.once('error', (error) => body.destroy(error));
  // A client gone before the end leaves no file open.
  body.once('close', () => file.destroy());
  file.pipe(body);
  return body;
}

/** One `bytes=a-b`, `bytes=a-` or `bytes=-n` range within `size`; null when absent, 'bad' when unsatisfiable. */
function byteRange(header: string | undefined, size: number): { start: number; end: number } | null | 'bad' {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return 'bad';
  let start: number;
  let end: number;
  if (match[1] === '') {
    start = Math.max(0, size - Number(match[2]));
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  return start > end || start >= size ? 'bad' : { start, end };
}
