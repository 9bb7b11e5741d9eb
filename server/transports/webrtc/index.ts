// WebRTC signalling for the engine router (docs/api.md#webrtc):
//   POST  /offer?mode=&program_id=   {sdp, type:"offer"} → {pc_id, sdp, type:"answer"}
//   PATCH /offer/:pc_id              {candidates:[{candidate, sdpMid, sdpMLineIndex}]}
//   PATCH /offer                     Pipecat's form: {pc_id, candidates:[{candidate, sdp_mid, sdp_mline_index}]}
//   GET   /ice-servers               {iceServers, ttlSeconds}
// POST /offer also takes Pipecat SmallWebRTC's fields: pc_id + restart_pc renegotiate an existing
// connection, request_data is accepted and ignored. A pc_id is not a credential (it travels in
// URLs): renegotiating or restarting a peer needs the principal that opened it (the same JWT or
// API key account, or the same session token); a PATCH that carries only a pc_id can do nothing
// but add ICE candidates to the peer. Logs show a pc_id's first characters only.
// Bounds (so no one offer holds up the thread that paces audio): an offer's size, media sections
// and candidates, a peer's candidates in all and its PATCH rate are checked before werift sees
// any of it (sdp-bounds.ts); the cap on peers
// counts a place from before the first await of an offer, so concurrent offers cannot pass it.
// Remote candidates naming addresses the server must not probe (link-local, multicast, its own
// loopback unless it listens on loopback only) are dropped from offers and PATCHes
// (candidate-filter.ts).
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SlotPool, type Slot } from '../../engine/session-slots.ts';
import { authenticateRequest } from '../../http/auth.ts';
import { RateLimiter } from '../../http/rate-limiter.ts';
import { accountOf, type Principal } from '../../http/services.ts';
import { parseInput } from '../../http/validation.ts';
import { noBody } from '../../http/api-contract.ts';
import { CandidatesAdded, IceConfiguration, OfferAnswer } from '../../protocol/api/engine-router.ts';
import { AppError } from '../../errors.ts';
import { digest } from '../../security/opaque-tokens.ts';
import { admitEngineSession, decorateAdmittedSession, type AdmittedSession } from '../session-admission.ts';
import { iceConfiguration } from './ice-servers.ts';
import type { ConnectPhases, WebRtcPeer } from './peer.ts';
import { checkCandidateBounds, checkOfferBounds, MAX_PATCHES_PER_WINDOW, PATCH_WINDOW_MS } from './sdp-bounds.ts';
import { candidateRefusal, withoutRefusedCandidates } from './candidate-filter.ts';
import { isLoopbackHost } from '../../security/outbound-target.ts';

// werift (with Opus) takes about 0.3 s of CPU to import, all of it compiling and evaluating
// modules on the main thread, the thread that paces every call's audio: loaded mid-call, it would
// hold every live call's frames that long. So it loads just after the server starts listening,
// before calls come, not on the serving line's path; the studio's page, the /test page and
// GET /ice-servers ask for it too (a no-op once it is in), and an offer waits for it at the latest.
// Loading it only when a WebRTC caller first showed itself saved test servers that CPU, but put
// that load in the middle of whatever calls a hosted server had live at the time.
let peerModule: Promise<typeof import('./peer.ts')> | null = null;
const loadPeerModule = () => (peerModule ??= import('./peer.ts'));

/** Starts loading werift in the background, once: a WebRTC caller is probably coming. */
export function preloadWebRtc(log: FastifyBaseLogger): void {
  if (peerModule) return;
  loadPeerModule().catch((error: unknown) => {
    peerModule = null;
    log.warn({ err: error }, 'could not preload WebRTC');
  });
}
import { testPageRoute } from './test-page.ts';

// Its size is bounded by checkOfferBounds, with a status that says what is wrong with it.
const OfferBody = z.object({
  sdp: z.string().min(1, 'sdp must be the SDP offer text'),
  type: z.literal('offer', { error: 'type must be "offer"' }),
  pc_id: z.string().max(100).nullish(),
  restart_pc: z.boolean().nullish(),
  request_data: z.unknown().optional(),
  requestData: z.unknown().optional(),
});

const Candidate = z
  .object({
    candidate: z.string().max(2_000),
    sdpMid: z.string().max(64).nullish(),
    sdpMLineIndex: z.number().int().min(0).max(64).nullish(),
    sdp_mid: z.string().max(64).nullish(),
    sdp_mline_index: z.number().int().min(0).max(64).nullish(),
  })
  .transform((c) => ({ candidate: c.candidate, sdpMid: c.sdpMid ?? c.sdp_mid ?? null, sdpMLineIndex: c.sdpMLineIndex ?? c.sdp_mline_index ?? null }));

const CandidatesBody = z.object({
  pc_id: z.string().max(100).optional(),
  candidates: z.array(Candidate).max(50, 'at most 50 candidates at a time'),
});

export interface WebRtcOptions {
  connectTimeoutMs?: number;
  idleTimeoutMs?: number;
  disconnectGraceMs?: number;
}

export async function webrtcTransport(app: FastifyInstance, options: WebRtcOptions = {}): Promise<void> {
  const { config } = app.services;
  /** Live peers by pc_id, with who opened them and how many remote candidates they took. */
  const peers = new Map<string, { peer: WebRtcPeer; principal: Principal; candidates: number }>();
  /** Places of peers, taken before an offer's first await and given back when the peer closes or the offer fails. */
  const peerSlots = new SlotPool({ total: config.engine.maxPeerConnections });
  const patchRate = new RateLimiter(MAX_PATCHES_PER_WINDOW, PATCH_WINDOW_MS);
  /** A server on loopback only (the desktop app) is reached by a browser on the same machine, over loopback. */
  const loopbackDeployment = isLoopbackHost(config.host);
  decorateAdmittedSession(app);
  await testPageRoute(app, () => preloadWebRtc(app.log));
  app.addHook('onListen', async () => {
    setTimeout(() => preloadWebRtc(app.log), 100).unref();
  });

  app.addHook('preClose', async () => {
    for (const { peer } of peers.values()) peer.close('server_shutdown');
  });

  const findPeer = (pcId: string | undefined) => {
    const entry = pcId ? peers.get(pcId) : undefined;
    if (!entry) throw new AppError('not_found', `No peer connection "${pcId ?? ''}"; it may have ended.`);
    return entry;
  };

  const badSdp = (error: unknown) => new AppError('bad_request', `The SDP offer could not be used: ${error instanceof Error ? error.message : String(error)}`);
  const usableOffer = (peer: WebRtcPeer, sdp: string) => {
    const { sdp: usable, dropped } = withoutRefusedCandidates(sdp, loopbackDeployment);
    if (dropped > 0) app.log.debug({ peer: peer.logId, dropped }, 'dropped remote ICE candidates the server does not probe');
    return usable;
  };
  const answerOrBadSdp = async (peer: WebRtcPeer, sdp: string) => {
    try {
      return await peer.answer(usableOffer(peer, sdp));
    } catch (error) {
      throw badSdp(error);
    }
  };

  /**
   * A renegotiation or restart of a live peer: the caller must be whoever opened it. A session
   * token already used by this peer still names it; anything else authenticates as usual. Any
   * mismatch reads as an unknown peer (404), so a pc_id cannot be probed.
   */
  const authenticateAsOwner = async (request: FastifyRequest, owner: Principal): Promise<void> => {
    const token = (request.query as Record<string, unknown>).session_token;
    let caller: Principal | null = null;
    if (typeof token === 'string' && token) {
      const session = await app.services.store.sessions.findByTokenHash(digest(token));
      if (session) caller = { kind: 'session', accountId: session.accountId, sessionId: session.id };
    } else {
      await authenticateRequest(app, request, 'engine', false);
      caller = request.principal;
    }
    const same =
      caller !== null &&
      caller.kind === owner.kind &&
      caller.accountId === owner.accountId &&
      (caller.kind !== 'session' || (owner.kind === 'session' && caller.sessionId === owner.sessionId));
    if (!same) throw new AppError('not_found', 'No peer connection with that pc_id; it may have ended.');
    request.principal = owner;
  };

  // Authenticated in the handler: a renegotiation or restart is checked against the peer's owner.
  app.post('/offer', { config: { auth: 'engine', startsSession: true, authInHandler: true }, schema: { response: { 200: OfferAnswer } } }, async (request: FastifyRequest) => {
    const phases: ConnectPhases = { offerAt: performance.now() };
    const body = parseInput(OfferBody, request.body);
    const offered = checkOfferBounds(body.sdp);
    const existing = body.pc_id ? peers.get(body.pc_id) : undefined;
    if (existing) await authenticateAsOwner(request, existing.principal);
    // A new offer on a live connection renegotiates it: same peer, new answer.
    if (existing && !body.restart_pc) {
      checkCandidateBounds(existing.candidates, offered.candidates);
      existing.candidates += offered.candidates;
      return { pc_id: existing.peer.id, sdp: await answerOrBadSdp(existing.peer, body.sdp), type: 'answer' };
    }
    // Pipecat's restart_pc: the client built a new connection (ICE failed or stayed down) and
    // keeps its pc_id; the old peer and its session end, a new session starts on the new one.
    // Refusals that need no account come first, so they never use up a one-connection token.
    if (!/^v=0/m.test(body.sdp) || !/^m=audio /m.test(body.sdp)) {
      throw new AppError('bad_request', 'The SDP offer is malformed or has no audio section (m=audio).');
    }
    // The old peer gives its place back as it closes, and the new one takes it in the same tick.
    if (existing) existing.peer.close('restarted');
    const slot = peerSlots.take('peers');
    if (typeof slot === 'string') throw new AppError('at_capacity', 'Too many WebRTC connections at once; try again shortly.');
    return offerOnNewPeer(request, body.sdp, offered.candidates, slot, existing?.peer.id, phases).catch((error: unknown) => {
      // Refused or failed: the place is given back (a peer made on the way gave it back already as it closed).
      slot.release();
      throw error;
    });
  });

  /**
   * Authenticates (a new peer), admits the session, and answers the offer on a new peer that holds
   * `slot` until it closes. Admission (flow, capacity, credit, the session record: store round
   * trips) and werift's reading of the offer run side by side; the answer is set (its candidates
   * gathered, werift starting to connect) and sent only once both are done: a refused session is
   * still refused before any answer, and costs only a peer that never answered. An authenticated
   * caller is needed first, so an anonymous offer never reaches werift.
   */
  const offerOnNewPeer = async (request: FastifyRequest, offerSdp: string, offeredCandidates: number, slot: Slot, restartedId: string | undefined, phases: ConnectPhases) => {
    if (restartedId === undefined) await authenticateRequest(app, request, 'engine', true);
    phases.authenticatedAt = performance.now();
    const admitting = admitEngineSession(app, request, 'webrtc').finally(() => (phases.admittedAt = performance.now()));
    // A refusal may come while werift is still loading (the first offer of a process): handled
    // from now on, it is read below, instead of being an unhandled rejection in the meantime.
    admitting.catch(() => undefined);
    let module: Awaited<ReturnType<typeof loadPeerModule>>;
    try {
      module = await loadPeerModule();
    } catch (error) {
      await admitting.then((admitted) => admitted.refuse('error')).catch(() => undefined);
      throw error;
    }
    let admitted: AdmittedSession | null = null;
    const peer = new module.WebRtcPeer({
      id: restartedId,
      iceServers: iceConfiguration(config.ice, accountOf(request.principal)).iceServers,
      connectTimeoutMs: options.connectTimeoutMs ?? 30_000,
      idleTimeoutMs: options.idleTimeoutMs ?? 60_000,
      disconnectGraceMs: options.disconnectGraceMs ?? 10_000,
      log: request.log,
      phases,
      // A restarted peer's replacement holds the same id: only remove the entry that is this peer.
      onClosed: (closed, reason) => {
        slot.release();
        if (peers.get(closed.id)?.peer === closed) peers.delete(closed.id);
        // A peer that never connected never started its session: its record is ended here.
        if (!closed.hasSession && admitted) {
          admitted.refuse(reason).catch((error: unknown) => request.log.warn({ err: error }, 'could not end the session of an unconnected peer'));
        }
      },
    });
    // The offer is read and the answer made beside admission; the answer is set (and werift
    // starts connecting toward the caller) only once the session is admitted, just before it is sent.
    const [admission, prepared] = await Promise.allSettled([admitting, peer.prepareAnswer(usableOffer(peer, offerSdp)).catch((error: unknown) => Promise.reject(badSdp(error)))]);
    // A refusal says what the caller must change first, as it did before any SDP was read.
    if (admission.status === 'rejected') {
      peer.close('refused');
      throw admission.reason;
    }
    admitted = admission.value;
    let answer: string | null = null;
    let failure: unknown = prepared.status === 'rejected' ? prepared.reason : null;
    if (failure === null && peer.connectionState !== 'closed') {
      try {
        answer = await peer.commitAnswer();
      } catch (error) {
        failure = badSdp(error);
      }
    }
    if (answer === null || peer.connectionState === 'closed') {
      peer.close('refused');
      await admitted.refuse();
      throw failure ?? new AppError('bad_request', 'The peer connection closed before it could be answered.');
    }
    peers.set(peer.id, { peer, principal: request.principal!, candidates: offeredCandidates });
    const ready = admitted;
    peer.onConnected(() => ready.start(peer.output));
    return { pc_id: peer.id, sdp: answer, type: 'answer' };
  };

  const addCandidates = async (pcId: string | undefined, body: unknown) => {
    const { candidates } = parseInput(CandidatesBody, body);
    const entry = findPeer(pcId);
    const { peer } = entry;
    const rate = patchRate.take(peer.id);
    if (!rate.allowed) {
      throw new AppError('rate_limited', `A peer connection may send at most ${MAX_PATCHES_PER_WINDOW} candidate PATCHes in ${PATCH_WINDOW_MS / 1000} seconds.`, undefined, {
        'retry-after': String(rate.retryAfterSeconds),
      });
    }
    // An end-of-candidates marker is not a candidate: it neither counts nor reaches werift.
    const usable = candidates.filter((candidate) => candidate.candidate);
    checkCandidateBounds(entry.candidates, usable.length);
    entry.candidates += usable.length;
    for (const candidate of usable) {
      const refusal = candidateRefusal(candidate.candidate, loopbackDeployment);
      if (refusal !== null) {
        app.log.debug({ peer: peer.logId, refusal }, 'dropped a remote ICE candidate the server does not probe');
        continue;
      }
      // A candidate werift cannot use is skipped, not fatal.
      try {
        await peer.addCandidate(candidate);
      } catch (error) {
        app.log.debug({ err: error, peer: peer.logId }, 'ignored a remote ICE candidate');
      }
    }
    return { status: 'success' };
  };

  // Open: knowing the pc_id (handed only to the peer's owner) is the credential.
  const candidates = { 200: CandidatesAdded, 204: noBody('Unused: every PATCH answers 200') };
  app.patch<{ Params: { pc_id: string } }>('/offer/:pc_id', { config: { auth: 'none' }, schema: { response: candidates } }, async (request) => addCandidates(request.params.pc_id, request.body));
  app.patch('/offer', { config: { auth: 'none' }, schema: { response: candidates } }, async (request) => addCandidates((request.body as { pc_id?: string } | undefined)?.pc_id, request.body));

  app.get('/ice-servers', { config: { auth: 'engine' }, schema: { response: { 200: IceConfiguration } } }, async (request) => {
    preloadWebRtc(app.log);
    return iceConfiguration(config.ice, accountOf(request.principal));
  });
}
