// buildApp(config): the whole server as a Fastify instance that does not listen. main.ts and
// Electron listen; tests build it with a temporary data dir. Every route is registered here,
// explicitly (autoload breaks once bundled). Over 400 lines on purpose: it is the one place
// where every part is made and handed what it needs (store, engine, jobs, outcomes, phone, SIP,
// observability), in the order they depend on each other and close in reverse.
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { mkdir } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { publicUrlFor, type Config } from './config.ts';
import { apiKeyRoutes } from './api/api-keys/index.ts';
import { authRoutes } from './api/auth/index.ts';
import { creditRoutes } from './api/credits/index.ts';
import { flowRoutes } from './api/flows/index.ts';
import { flowTestRoutes } from './api/flow-tests/index.ts';
import { healthRoutes } from './api/health/index.ts';
import { doNotCallRoutes } from './api/do-not-call/index.ts';
import { phoneNumberRoutes } from './api/phone-numbers/index.ts';
import { providerRoutes } from './api/providers/index.ts';
import { secretRoutes } from './api/secrets/index.ts';
import { createToolRequestSender } from './engine/tools/tool-requests.ts';
import { sessionRoutes } from './api/sessions/index.ts';
import { analyticsRoutes } from './api/analytics/index.ts';
import { voiceRoutes } from './api/voices/index.ts';
import { webhookRoutes } from './api/webhooks/index.ts';
import { apiContractPlugin, openApiRoutes } from './http/api-contract.ts';
import { authPlugin } from './http/auth.ts';
import { errorHandlerPlugin, frameworkErrors } from './http/error-handler.ts';
import { hostAndOriginPlugin } from './http/host-and-origin.ts';
import { jsonBodyPlugin } from './http/json-body.ts';
import { nulCharactersPlugin } from './http/nul-characters.ts';
import { rateLimitsPlugin } from './http/rate-limits.ts';
import { responseHeadersPlugin } from './http/response-headers.ts';
import { servicesPlugin, type Services } from './http/services.ts';
import { FlowJobs } from './jobs/flow-jobs.ts';
import { holdExit } from './concurrency/exit-guards.ts';
import { AccessTokens } from './security/access-tokens.ts';
import { decodeConfiguredJwtSecret, decodeConfiguredKey, loadOrCreateKeyFile } from './security/key-files.ts';
import { PasswordHasher } from './security/passwords.ts';
import { SecretBox } from './security/secret-box.ts';
import type { Store } from './store/store.ts';
import { openWorkerStore } from './store/sqljs/worker-store.ts';
import { presenceTimingFor, startNodePresence } from './cluster/node-presence.ts';
import { SessionHooks, loggingHook, type SessionHook } from './engine/hooks.ts';
import { sileroVoiceInput, type VoiceInput, type VoiceInputFactory } from './engine/voice-input.ts';
import { VoiceEngine, type ModelUsage } from './engine/voice-engine.ts';
import { loadTurnModel } from './engine/turn-model.ts';
import { createProviderRegistry } from './engine/provider-registry.ts';
import { holdFlite } from './providers/tts/flite.ts';
import { TTS_VOICES } from './providers/catalog.ts';
import { AppError } from './errors.ts';
import { ENGINE_SAMPLE_RATE, ProviderError } from './providers/types.ts';
import { startRecording, type CallRecording } from './outcomes/recording.ts';
import { startRetention } from './outcomes/retention.ts';
import { TimelineRecorder } from './outcomes/timeline.ts';
import { WebhookDispatcher } from './outcomes/webhooks/dispatcher.ts';
import { WebhookOutbox } from './outcomes/webhooks/outbox.ts';
import { SessionAnalyzer, type OutcomeModel } from './outcomes/analysis.ts';
import { webSocketServerPlugin, websocketTransport } from './transports/websocket/index.ts';
import { pendingUpgradesPlugin } from './http/pending-upgrades.ts';
import { phoneTransport } from './transports/phone/index.ts';
import { hangUpCallsOfGoneNodes } from './transports/phone/phone-stream.ts';
import { webrtcTransport, type WebRtcOptions } from './transports/webrtc/index.ts';
import { sipTransport } from './transports/sip/index.ts';
import { studioRoutes } from './studio.ts';
import { AudioOut } from './engine/audio-out.ts';
import { Observability, type ChildLogger } from './observability/observability.ts';
import { OUTBOX_COUNT_BOUND } from './observability/metrics.ts';

export interface BuildOptions {
  /** A pino logger configuration or false; defaults to the configured level, secrets redacted. */
  logger?: FastifyServerOptions['logger'];
  /** More session hooks besides the logging one (analytics, tests). */
  hooks?: SessionHook[];
  /** Length of a billed minute; tests shorten it. */
  minuteMs?: number;
  /** Peer-connection timeouts; tests shorten them. */
  webrtc?: WebRtcOptions;
  /** The built studio's folder; found next to the server when unset, null to serve none. */
  studioDir?: string | null;
  /** How callers are heard (Silero by default); tests that carry no audio inject a lighter one. */
  voiceInput?: VoiceInputFactory;
  /** Start the embedded voice and the configured vendors' SDKs once listening (default true). */
  warmUpVoice?: boolean;
  /** Check every answer against its route's response schema, a mismatch a 500 (tests; costs a parse per answer). */
  checkResponses?: boolean;
}

/** How long a close waits for a voice model load in progress (a load that hangs is cut off). */
const VOICE_LOAD_WAIT_ON_CLOSE_MS = 5_000;

/**
 * The voice input, loaded in the background so the server listens at once; a session that starts
 * before it is ready waits for it. Without it the server still runs: audio then gets a clear
 * error, and typed turns and the simulator still work.
 */
function loadVoiceInput(app: FastifyInstance, factory: VoiceInputFactory, closing: () => boolean): VoiceInput {
  const input = factory();
  let loading: Promise<unknown> | null = null;
  // The process must not exit while the model is still loading: onnxruntime aborts the whole
  // process (a native Napi::Error, SIGABRT instead of exit 0) when its thread is torn down
  // mid-load. Seen on SIGTERM just after start, 4 of 4 times beside four busy loops.
  app.addHook('onClose', async () => {
    if (!loading) return;
    const timer = new AbortController();
    await Promise.race([loading.catch(() => {}), delay(VOICE_LOAD_WAIT_ON_CLOSE_MS, undefined, { signal: timer.signal }).catch(() => {})]);
    timer.abort();
  });
  afterListening(app, () => {
    loading = input.load();
    holdExit(loading);
    return loading.then(
      () => app.log.info('voice activity detection is ready'),
      (error: unknown) => {
        // A shutdown that stops the load half-way is not a failure of the model.
        if (!closing()) app.log.error({ err: error }, 'voice activity detection could not be loaded; voice input is off');
      },
    );
  });
  return input;
}

/**
 * Work that can wait until the server answers requests (warm-ups, model loads). In tests that
 * never listen (inject), it still runs once the app is ready.
 */
function afterListening(app: FastifyInstance, work: () => Promise<unknown>): void {
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    setTimeout(() => void work(), 50).unref();
  };
  app.addHook('onListen', async () => start());
  app.addHook('onReady', async () => {
    setTimeout(start, 2_000).unref();
  });
}

/** Session tokens travel in URLs (/v1/ws/<token>, ?session_token=); logs get only their start. */
export function redactUrl(url: string): string {
  return url
    .replace(/(\/v1\/ws\/)([^/?#]{6})[^/?#]*/g, '$1$2…')
    .replace(/(\/offer\/)([^/?#]{9})[^/?#]*/g, '$1$2…')
    .replace(/([?&](?:session_token|access_token|api_key|token|key)=)([^&#]{0,6})[^&#]*/gi, '$1$2…');
}

function loggerOptions(config: Config): FastifyServerOptions['logger'] {
  if (config.logLevel === 'silent') return false;
  const pretty = (config.logFormat ?? (process.stdout.isTTY ? 'pretty' : 'json')) === 'pretty';
  return {
    level: config.logLevel,
    // pino-pretty formats in pino's transport worker thread, not on the thread that paces audio.
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } } : {}),
    redact: { paths: ['req.headers.authorization', 'req.headers["x-service-key"]', 'req.headers.cookie'], censor: '[redacted]' },
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), ip: req.ip }),
    },
  };
}

/**
 * The whole server, ready to listen but not listening: main.ts and the desktop app listen, tests
 * inject. Closing it ends live sessions and flushes the store.
 */
export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  if (config.databaseUrl && (!config.secretKey || !config.jwtSecret)) {
    // Keys generated in one node's data dir would differ on the next node: its logins and the
    // secrets it sealed would not open anywhere else.
    throw new Error('On PostgreSQL (VOXFLOW_DATABASE_URL) every node must share its keys: set VOXFLOW_SECRET_KEY and VOXFLOW_JWT_SECRET (e.g. `openssl rand -base64 32` and `openssl rand -base64 48`)');
  }
  // The end-of-turn model, when one is configured, loads first: a file that cannot be used stops
  // the start with a TurnModelError naming it, before anything else is opened. Every session's
  // end-of-turn decision asks it (SpokenTurnsOptions.turnModel).
  const turnModel = config.engine.turnModel ? await loadTurnModel(config.engine.turnModel) : null;
  const secretKey = config.secretKey ? decodeConfiguredKey(config.secretKey) : await loadOrCreateKeyFile(config.dataDir, 'secret.key');
  const jwtSecret = config.jwtSecret ? decodeConfiguredJwtSecret(config.jwtSecret) : await loadOrCreateKeyFile(config.dataDir, 'jwt.key', 48);
  // The per-account session cap is held by the store as sessions connect, over every node
  // (docs/hosting.md#several-nodes-on-postgresql).
  const { sessionsPerAccount } = config.engine;
  // The embedded store runs in a worker thread, off the thread that paces audio
  // (docs/benchmarks.md#what-the-figures-rest-on); should that thread die, every store call is a
  // 503 and the app's log says why.
  let storeLog: FastifyBaseLogger | null = null;
  const onWorkerLost = (error: Error) =>
    storeLog ? storeLog.error({ err: error }, 'the store worker stopped: every store call fails (503) until the server is restarted') : process.emitWarning(error.message);
  // PostgreSQL's client loads only when it is the store: evaluating pg makes Node load its fetch
  // (undici and web streams, to ask whether this is a Cloudflare worker), CPU that every server
  // on the embedded store would otherwise pay at start-up.
  const openedStore: Store = config.databaseUrl
    ? await (await import('./store/postgres/store.ts')).openPostgresStore({ url: config.databaseUrl, sessionsPerAccount, nodeGoneAfterSecs: config.nodeTimeoutSeconds })
    : await openWorkerStore({ dataDir: config.dataDir, sessionsPerAccount, onWorkerLost });
  // Flow documents are parsed and edited in worker threads
  // (docs/benchmarks.md#what-the-figures-rest-on); started on first use.
  // While calls are live, a job yields the CPU to the thread that paces their audio.
  let liveCalls = () => 0;
  const flowJobs = new FlowJobs({ workers: config.limits.flowWorkers, budgetMs: config.limits.flowJobBudgetMs, callsLive: () => liveCalls() > 0 });
  // Metrics and traces (docs/hosting.md#prometheus-and-opentelemetry): each off, and nothing of it
  // made or registered, unless configured.
  const observability = new Observability(config, {
    audioPacing: () => ({ lateFrames: AudioOut.lateFrames, underrunFrames: AudioOut.underrunFrames }),
    flowJobs: () => flowJobs.load,
    webhookOutboxDepth: () => openedStore.webhooks.pendingCount(OUTBOX_COUNT_BOUND),
  });
  const store = observability.timedStore(openedStore);
  try {
    const secrets = new SecretBox(secretKey);

    const app = Fastify({
      logger: options.logger ?? loggerOptions(config),
      // Errors raised before routing (a malformed URL, an overlong id) get the API's error body too.
      frameworkErrors,
      bodyLimit: config.limits.bodyBytes,
      // `/v1/flows/` is the list, as clients expect, not a flow with an empty id.
      routerOptions: { ignoreTrailingSlash: true },
      requestTimeout: config.limits.requestTimeoutMs,
      // Behind a reverse proxy, the client's address comes from X-Forwarded-For (rate limits per IP).
      trustProxy: config.publicUrl?.startsWith('https:') ? 'loopback' : false,
      return503OnClosing: true,
    });
    storeLog = app.log;
    const registry = createProviderRegistry(config, store, secrets);
    let closing = false;
    app.addHook('preClose', async () => {
      closing = true;
    });
    const voiceInput = loadVoiceInput(app, options.voiceInput ?? sileroVoiceInput, () => closing);
    // A slow or failing warm-up must not hold up the API; the first session waits if needed.
    if (options.warmUpVoice !== false) {
      afterListening(app, () =>
        registry.warmUp().then(
          () => app.log.info('the embedded voice is ready'),
          (error: unknown) => {
            // Stopping the server while flite starts terminates its worker: that is no failure.
            if (!closing) app.log.warn({ err: error }, 'the embedded voice could not warm up');
          },
        ),
      );
    }
    // Every session's events, kept in the store for the business, and the calls asked to be
    // recorded (docs/api.md#what-a-call-leaves-behind).
    const timelines = new TimelineRecorder(store, app.log);
    // Session events for the account's webhooks: a durable outbox, delivered on timers
    // (docs/api.md#what-a-call-leaves-behind).
    const webhookDispatcher = new WebhookDispatcher(store, secrets, app.log, {
      ...config.webhooks,
      retentionDays: config.retentionDays,
      ...(observability.metrics ? { onAttempt: (attempt: { delivered: boolean; ageSecs: number }) => observability.webhookAttempt(attempt) } : {}),
    });
    // With port 0 the real port is known only once listening (recording URLs in session.ended).
    let listeningPort = config.port;
    const webhooks = new WebhookOutbox(store, app.log, () => webhookDispatcher.wake(), () => publicUrlFor(config, listeningPort));
    // Each ended call's outcome and success (docs/api.md#outcome-and-success): worked out after
    // the session is stored as ended and its session.ended is in the outbox, by the account's model.
    const analyzer = new SessionAnalyzer({
      store,
      log: app.log,
      written: () => webhookDispatcher.wake(),
      async flowOf(session) {
        if (session.flowId === null) return null;
        const { accountId, flowId } = session;
        const yaml = session.flowDraft
          ? (await store.flowVersions.getDraft(accountId, flowId))?.yamlContent
          : session.flowVersion !== null
            ? (await store.flowVersions.get(accountId, flowId, session.flowVersion))?.yamlContent
            : (await store.flows.get(accountId, flowId))?.yamlContent;
        return yaml === undefined ? null : flowJobs.parseDocument(`analysis:${accountId}`, yaml);
      },
      async modelFor(accountId): Promise<OutcomeModel | null> {
        const { llm } = (await registry.providersFor(accountId)).providers;
        if (!llm?.completeJson) return null;
        return { provider: llm.provider, structured: async (request) => ({ kind: 'json', text: await llm.completeJson!(request) }) };
      },
    });
    const recordings = new Set<CallRecording>();
    // Flow http tools reach what webhooks may reach (--allow-private-webhooks covers both); the
    // engine sends them for calls, the API for a designer's test request.
    const sendToolRequest = createToolRequestSender({ secrets: store.secrets, box: secrets, allowPrivate: config.webhooks.allowPrivate });
    const engine = new VoiceEngine({
      // An account key of its own, so an account's uploads never make its own session start wait.
      parseFlowDocument: (accountId, yaml) => flowJobs.parseDocument(`engine:${accountId}`, yaml),
      store,
      observer: {
        event: observability.enabled
          ? (id, event) => {
              timelines.record(id, event);
              observability.event(id, event);
            }
          : (id, event) => timelines.record(id, event),
        flush: (id) => timelines.flush(id),
        ...(observability.enabled ? { modelUsage: (id: string, usage: ModelUsage) => observability.modelUsage(id, usage) } : {}),
        // session.ended carries the stored outcome: it is written once the timeline is.
        closed: (id) => {
          observability.closed(id);
          void timelines
            .end(id)
            .then(() => webhooks.sessionClosed(id))
            .then(() => analyzer.sessionClosed(id));
        },
        recording: (record, sampleRate) => {
          const recording = startRecording(config.dataDir, record.id, app.log, sampleRate);
          recordings.add(recording);
          store.sessions.setRecordingFile(record.id, recording.file).catch((error: unknown) => app.log.error({ err: error, session: record.id }, 'could not name a recording'));
          const close = () => recording.close().finally(() => recordings.delete(recording));
          return { caller: (pcm) => recording.callerAudio(pcm), agent: (pcm) => recording.agentAudio(pcm), close };
        },
      },
      hooks: new SessionHooks([loggingHook(app.log), webhooks, ...[observability.hook()].filter((h) => h !== null), ...(options.hooks ?? [])], app.log),
      log: app.log,
      // Each session's lines name it, its account and (tracing on) its trace.
      sessionStarting: (session) => observability.sessionStarting(session, app.log as ChildLogger),
      providersFor: registry.providersFor,
      userInput: voiceInput.userInput,
      hearsVoice: () => voiceInput.hearsVoice(),
      voiceReady: () => voiceInput.voiceReady(),
      assistantPrompt: config.engine.assistantPrompt,
      language: config.engine.language,
      turnDefaults: config.engine.turn,
      turnModel,
      maxSessions: config.engine.maxSessions,
      maxSessionMs: config.engine.maxSessionSeconds * 1000,
      idleEndMs: config.engine.idleEndSeconds * 1000,
      minuteMs: options.minuteMs,
      sendToolRequest,
    });
    liveCalls = () => engine.activeSessions;
    app.addHook('onListen', async () => {
      const address = app.server.address();
      if (address && typeof address === 'object') listeningPort = address.port;
    });
    const services: Services = {
      config,
      minuteMs: options.minuteMs,
      publicUrl: () => publicUrlFor(config, listeningPort),
      store,
      passwords: new PasswordHasher(config.passwordHashCost, config.limits.concurrentPasswordHashes, config.limits.queuedPasswordHashes),
      accessTokens: new AccessTokens(jwtSecret),
      secrets,
      engine,
      sendToolRequest,
      flowJobs,
      callStatus: (session, status) => webhooks.callStatus(session, status),
      // The voice picker's preview: the account's voice, as its sessions would get it.
      async previewVoice(accountId, voice, text, signal) {
        const { tts } = (await registry.providersFor(accountId)).providers;
        if (!tts) throw new AppError('voice_unavailable', 'This server has no voice for this account.');
        const known = TTS_VOICES[tts.provider];
        if (voice !== null && known && !known.includes(voice)) {
          throw new AppError('invalid_request', `The ${tts.provider} voice has no "${voice}"; choose one of ${known.join(', ')}.`, [{ field: 'voice', message: 'unknown voice' }]);
        }
        const chunks: Int16Array[] = [];
        try {
          for await (const chunk of tts.synthesize(text, signal, { aheadMs: 0, ...(voice !== null && { voice }) })) chunks.push(chunk);
        } catch (error) {
          if (signal.aborted) throw new AppError('voice_unavailable', `The voice provider (${tts.provider}) took too long to speak the preview.`);
          if (!(error instanceof ProviderError)) throw error;
          throw new AppError('voice_unavailable', `The voice provider (${tts.provider}) did not speak the preview: ${error.message}`);
        }
        const pcm = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
        let at = 0;
        for (const chunk of chunks) pcm.set(chunk, (at += chunk.length) - chunk.length);
        return { pcm, sampleRate: ENGINE_SAMPLE_RATE, provider: tts.provider };
      },
      sipListening: [],
      sipRegistration: null,
      studioPage: null,
      sipCalls: null,
    };
    const retention = startRetention(store, config.dataDir, config.retentionDays, app.log);
    // On PostgreSQL: this node's heartbeat, and the sessions of gone nodes ended (their webhooks
    // told, their phone calls hung up at the carrier).
    const presence = startNodePresence(
      store,
      app.log,
      (ended) => {
        for (const id of ended) void webhooks.sessionClosed(id).then(() => analyzer.sessionClosed(id));
        void hangUpCallsOfGoneNodes(app, ended, app.log);
      },
      presenceTimingFor(config.nodeTimeoutSeconds),
    );
    // This server's share of the process's flite workers, let go when it closes.
    const releaseFlite = holdFlite();
    // Live sessions end (and are recorded, timelines included) before the store closes.
    app.addHook('preClose', async () => {
      await engine.close();
      await turnModel?.close();
      // No sweep may hand the webhooks an end once they are closing.
      await presence.stop();
      await Promise.all([...recordings].map((recording) => recording.close()));
      await timelines.close();
      await webhooks.close();
      await analyzer.close();
      await webhookDispatcher.close();
      await retention.stop();
      await observability.close();
    });
    app.addHook('onClose', async () => {
      // The store is flushed and its lock released whatever else fails on the way out.
      try {
        // Once no request is left that could still be waiting for a flow job.
        await flowJobs.close();
        await releaseFlite();
      } finally {
        await store.close();
      }
    });
    // The shared machinery every route stands on (server/http), then the API and the transports.
    await app.register(servicesPlugin, { services });
    await app.register(errorHandlerPlugin);
    await app.register(responseHeadersPlugin);
    await app.register(jsonBodyPlugin);
    await app.register(hostAndOriginPlugin);
    await app.register(rateLimitsPlugin);
    await app.register(pendingUpgradesPlugin);
    await app.register(nulCharactersPlugin);
    await app.register(authPlugin);
    // /ready answers why this node should not take new calls now: the store refusing writes, the
    // server closing or draining (true from the start of a SIGTERM, before sessions are ended), the session cap
    // reached, or the voice model still loading. /health stays what it was.
    await observability.register(
      app,
      () => [
        ...(store.writable() ? [] : ['the store refuses writes']),
        ...(closing || engine.shuttingDown ? ['the server is shutting down'] : []),
        ...(engine.activeSessions >= config.engine.maxSessions ? [`at the session cap (${config.engine.maxSessions} live sessions)`] : []),
        ...(engine.hearsVoice && !engine.voiceReady ? ['voice activity detection is still loading'] : []),
      ],
      redactUrl,
    );
    // Before any route: it validates, serializes and documents every route registered after it.
    await app.register(apiContractPlugin, { checkResponses: options.checkResponses ?? false });
    await app.register(openApiRoutes);
    await app.register(healthRoutes);
    await app.register(authRoutes);
    await app.register(apiKeyRoutes);
    await app.register(flowRoutes);
    await app.register(flowTestRoutes);
    await app.register(sessionRoutes);
    await app.register(analyticsRoutes);
    await app.register(creditRoutes);
    await app.register(providerRoutes);
    await app.register(voiceRoutes);
    await app.register(secretRoutes);
    await app.register(phoneNumberRoutes);
    await app.register(doNotCallRoutes);
    await app.register(webhookRoutes, { wake: (webhookId) => webhookDispatcher.probeNow(webhookId), pausedUntil: (webhookId) => webhookDispatcher.pausedUntil(webhookId) });
    await app.register(webSocketServerPlugin);
    await app.register(websocketTransport);
    await app.register(phoneTransport);
    await app.register(webrtcTransport, options.webrtc ?? {});
    await app.register(sipTransport);
    await app.register(studioRoutes, { dir: options.studioDir });
    await app.ready();
    // Deliveries an earlier run left pending go out now, with the ends of the last day it
    // recorded but died before putting in the outbox.
    webhookDispatcher.start();
    // Calls an earlier run died in the middle of end now, so they reach the webhooks below too.
    const interrupted = await store.sessions.endInterrupted();
    if (interrupted.length > 0) {
      app.log.warn({ sessions: interrupted.length }, 'ended the sessions the last run of the server left in progress (end_reason server_restarted)');
      void hangUpCallsOfGoneNodes(app, interrupted, app.log);
    }
    // Then the analyses an earlier run left unfinished (or never opened), after their session.ended.
    void webhooks.recoverMissedEnds(24 * 60 * 60).then(() => analyzer.start());
    return app;
  } catch (error) {
    await observability.close();
    await store.close();
    await turnModel?.close();
    throw error;
  }
}
