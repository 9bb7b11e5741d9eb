// The voice engine as the transports see it: starts sessions for an account (providers, flow,
// metering, hooks, the session record), keeps the live ones, and ends them all on shutdown.
// Over 400 lines: admission (the caps, credit, the flow's text) and starting a session share the
// slot and flow state kept here, and splitting them would pass that state between files.
import { parseFlow } from '../flow/parse.ts';
import type { FlowDocument } from '../flow/types.ts';
import type { Experiment, Flow, Session, SessionExperiment, Store } from '../store/store.ts';
import { callerIdOf, chooseArm } from './experiment-arms.ts';
import { AudioClock } from './audio-out.ts';
import type { SessionHooks } from './hooks.ts';
import { meteredProviders } from './metered-providers.ts';
import type { EndOfTurnModel } from './turn-model.ts';
import { SlotPool, type Slot } from './session-slots.ts';
import type { ServerEvent } from '../protocol/events.ts';
import { checkFirstMinute, type CreditCheck } from '../billing/admission.ts';
import { SessionMeter } from '../billing/metering.ts';
import { ENGINE_SAMPLE_RATE, type AccountProviders } from '../providers/types.ts';
import { withFlowVoice } from './flow-voice.ts';
import type { SendToolRequest } from './http-tools.ts';
import { VoiceSession, type SessionLogger, type SessionOutput } from './session.ts';
import type { TurnListener, UserTurnInput } from './user-input.ts';
import type { TurnPolicy } from './turn-rules.ts';

/** Parsed flows kept for session starts; a flow edited since is parsed again. */
const PARSED_FLOWS_KEPT = 200;

export interface VoiceEngineDeps {
  store: Store;
  hooks: SessionHooks;
  log: SessionLogger;
  /** The providers an account's sessions use (its own keys, else the server's). */
  providersFor(accountId: string): Promise<AccountProviders>;
  /** Builds a turn tracker over the VAD; null when no VAD could be loaded. */
  userInput: ((listener: TurnListener) => UserTurnInput) | null;
  /** False once the VAD is known not to work (it loads in the background). */
  hearsVoice?: () => boolean;
  /** The voice activity model has finished loading (it loads after the server listens). */
  voiceReady?: () => boolean;
  assistantPrompt: string;
  language: string;
  /** The server's turn-taking (SessionSetup.turnDefaults). */
  turnDefaults?: Partial<TurnPolicy>;
  /** The server's end-of-turn model (SessionSetup.turnModel). */
  turnModel?: EndOfTurnModel | null;
  /**
   * Live sessions at once on this node, all accounts together; admissions in flight count. The
   * per-account cap (VOXFLOW_SESSIONS_PER_ACCOUNT) is not counted here but by the store, as a
   * session connects, over every node sharing it (docs/hosting.md): a second, in-memory count of the
   * same cap would refuse sessions the cap allows (a claimed token counted by the store and an
   * admission in flight counted here each make the other see the account full).
   */
  maxSessions: number;
  /** Longest a session lasts before it ends with `max_duration`; 0 for no limit. */
  maxSessionMs: number;
  /** A session idle this long ends with `idle` (see VoiceSession for what counts); 0 for never. */
  idleEndMs: number;
  minuteMs?: number;
  /** Sees every event each session sends its client, then its close (the stored timeline). */
  observer?: SessionObserver;
  /** Parses a stored flow off the audio thread (server/jobs); without it, flows are parsed here. */
  parseFlowDocument?: (accountId: string, yaml: string) => Promise<FlowDocument | null>;
  /** Sends flows' http tool requests (signed, with the account's secrets); absent: they fail. */
  sendToolRequest?: SendToolRequest;
  /**
   * Called once as a session starts, before its first event: the logger its lines go to (one that
   * names the session, its account and its trace). Absent: `log` as it is.
   */
  sessionStarting?: (session: StartingSession) => SessionLogger;
}

/** What a session starting is, for its logger, its metrics' labels and its trace. */
export interface StartingSession {
  record: Session;
  /** The providers' vendor names (and the model's), never their keys. */
  providers: { stt: string | null; llm: string | null; llmModel: string | null; tts: string };
}

/** What a session sent, for whoever keeps it (server/outcomes keeps timelines). Must not throw or block. */
export interface SessionObserver {
  event(sessionId: string, event: ServerEvent): void;
  /** The session is about to be stored as ended: what it sent so far is kept first. */
  flush?(sessionId: string): Promise<void>;
  /** The session sent its last event. */
  closed(sessionId: string): void;
  /** The tokens one model response took, when the vendor said (metrics and traces count them). */
  modelUsage?(sessionId: string, usage: ModelUsage): void;
  /** A recording of the call at `sampleRate`, for a session that asked for one (null: none is kept). */
  recording?(record: Session, sampleRate: number): SessionRecordingTap | null;
}

/** Both sides of a call as they were heard; called on the audio path, so each call must be cheap. */
export interface SessionRecordingTap {
  caller(pcm: Int16Array): void;
  agent(pcm: Int16Array): void;
  /** The call is over: the rest is written out. */
  close(): Promise<void>;
}

export interface ModelUsage {
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
}

/** The session's model, telling the observer what each response cost in tokens; as it was when no observer counts them. */
function withUsageTold(providers: AccountProviders['providers'], sessionId: string, observer: SessionObserver | undefined): AccountProviders['providers'] {
  const { llm } = providers;
  const told = observer?.modelUsage?.bind(observer);
  if (!llm || !told) return providers;
  return {
    ...providers,
    llm: {
      provider: llm.provider,
      model: llm.model,
      ...(llm.completeJson ? { completeJson: llm.completeJson.bind(llm) } : {}),
      async *stream(request) {
        for await (const chunk of llm.stream(request)) {
          if (chunk.type === 'usage') told(sessionId, { provider: llm.provider, model: request.model ?? llm.model, inputTokens: chunk.inputTokens, outputTokens: chunk.outputTokens });
          yield chunk;
        }
      },
    },
  };
}

/** The session's providers with the flow's own voice, if it names one the vendor has. */
function withFlowVoiceIn(providers: AccountProviders['providers'], flow: FlowDocument | null): AccountProviders['providers'] {
  const tts = withFlowVoice(providers.tts, flow);
  return tts === providers.tts ? providers : { ...providers, tts };
}

export class EngineRefusal extends Error {
  override name = 'EngineRefusal';
  constructor(
    readonly code: 'insufficient_credits' | 'at_capacity' | 'flow_not_found' | 'invalid_flow',
    message: string,
  ) {
    super(message);
  }
}

export interface StartRequest {
  /** The stored session (claimed from a token, or created connected for the engine router). */
  record: Session;
  allowSimulator: boolean;
  /** The document prepareFlow() gave at admission (the version recorded); required with a flow. */
  flow?: FlowDocument;
  /** A phone call an answering machine took: leave the flow's voicemail message and end (SessionSetup.leaveVoicemail). */
  leaveVoicemail?: boolean;
  /** What the caller's audio goes through before the session hears it (SessionSetup.callerAudioLine). */
  callerAudioLine?: (pcm: Int16Array) => Int16Array;
}

/** The flow a session runs: a published version, or the owner's draft (a studio test). */
export interface PreparedFlow {
  document: FlowDocument;
  /** The version's number; null for a draft. */
  version: number | null;
  draft: boolean;
}

interface FlowSource {
  /** The parse cache's key: the flow id, or `<id>#draft`. */
  key: string;
  yaml: string;
  version: number | null;
  draft: boolean;
  /** Changes whenever the text may have: the version number or the draft's ETag. */
  stamp: string;
}

/**
 * A session the engine admitted and holds a place for, from before the first await of its
 * admission until it ends: the caps count admissions in flight, so none can overshoot them.
 */
export interface EngineAdmission {
  readonly providers: AccountProviders;
  /** Starts the session on an open transport; its place goes with it and is given back when it ends. Once only. */
  start(request: StartRequest, output: SessionOutput): VoiceSession;
  /** The session will not start (refused, failed, the client left): its place is given back. Idempotent; nothing once started. */
  release(): void;
}

export class VoiceEngine {
  private readonly sessions = new Set<VoiceSession>();
  /** Places of admitted sessions, started or not; a session gives its place back as it begins to end. */
  private readonly slots: SlotPool;
  private readonly clock = new AudioClock();
  private closing = false;
  /** Told when the last live session ends (drain). */
  private readonly drained: Array<() => void> = [];

  constructor(private readonly deps: VoiceEngineDeps) {
    this.slots = new SlotPool({ total: deps.maxSessions });
  }

  get activeSessions(): number {
    return this.sessions.size;
  }

  /** Whether spoken input works: false when the VAD could not be loaded. */
  get voiceReady(): boolean {
    return this.hearsVoice && (this.deps.voiceReady?.() ?? true);
  }

  get hearsVoice(): boolean {
    return this.deps.userInput !== null && (this.deps.hearsVoice?.() ?? true);
  }

  /**
   * Checked before a session record is created or a connection upgraded. The place is taken
   * before anything is awaited; a refusal from here on gives it back.
   */
  async admit(accountId: string): Promise<EngineAdmission> {
    if (this.closing) throw new EngineRefusal('at_capacity', 'The voice engine is shutting down.');
    const slot = this.slots.take(accountId);
    if (slot === 'full' || slot === 'owner_full') throw new EngineRefusal('at_capacity', 'The voice engine is at capacity; try again shortly.');
    let providers: AccountProviders;
    try {
      // The balance does not depend on the providers: both reads go to the store at once, so a
      // busy thread delays one answer from the store, not two in turn.
      const [resolved, balance] = await Promise.all([this.deps.providersFor(accountId), this.deps.store.credits.balance(accountId)]);
      providers = resolved;
      const credit = checkFirstMinute(balance, providers.ratePerMinute);
      if (!credit.ok) throw new EngineRefusal('insufficient_credits', credit.message);
    } catch (error) {
      slot.release();
      throw error;
    }
    let started = false;
    return {
      providers,
      start: (request, output) => {
        if (started || slot.released) throw new Error('an admission starts one session, and only while it holds its place');
        started = true;
        try {
          return this.start(request, providers, output, slot);
        } catch (error) {
          // E.g. its flow was deleted since admission: no session holds the place.
          slot.release();
          throw error;
        }
      },
      release: () => {
        if (!started) slot.release();
      },
    };
  }

  /**
   * Whether the account's balance pays a first minute at its rate, without taking a place: for a
   * phone call, which is answered (or refused in the carrier's own voice) before any session
   * exists, and for an outbound call before the carrier is asked to ring anyone.
   */
  async firstMinuteCovered(accountId: string): Promise<CreditCheck> {
    const providers = await this.deps.providersFor(accountId);
    return checkFirstMinute(await this.deps.store.credits.balance(accountId), providers.ratePerMinute);
  }

  /** The latest parsed text of recently run flows and drafts, oldest first (flow ids are unique across accounts). */
  private readonly parsedFlows = new Map<string, { yaml: string; document: FlowDocument | null }>();
  private readonly parsing = new Map<string, Promise<FlowDocument | null>>();

  /**
   * Parses the flow a session will run off the audio thread (the flow-job workers, when the
   * server has them), once per stored text: the published version, or with `draft` (the
   * owner's studio tests, docs/flows.md#drafts) the draft when there is one. Admission awaits this and
   * hands the result to start(). Refused when the flow is gone or does not validate.
   */
  async prepareFlow(accountId: string, flowId: string, options: { draft?: boolean; version?: number | null } = {}, stored?: Flow | null): Promise<PreparedFlow> {
    const source = await this.flowSource(accountId, flowId, options.draft ?? false, options.version ?? null, stored);
    const cached = this.parsedFlows.get(source.key);
    const parse = this.deps.parseFlowDocument;
    let document: FlowDocument | null;
    if ((cached && cached.yaml === source.yaml) || !parse) {
      document = this.parsedDocument(source);
    } else {
      // Sessions starting together share one parse of the same text.
      const key = `${source.key}\n${source.stamp}`;
      let parsing = this.parsing.get(key);
      if (!parsing) {
        parsing = parse(accountId, source.yaml)
          .then((parsed) => {
            this.remember(source.key, source.yaml, parsed);
            return parsed;
          })
          .finally(() => this.parsing.delete(key));
        this.parsing.set(key, parsing);
      }
      document = await parsing;
    }
    return { document: this.refuseInvalid(source, document), version: source.version, draft: source.draft };
  }

  /**
   * The arm of the flow's running experiment a new real session gets (docs/api.md#experiments):
   * sticky per caller id (a phone number, or metadata.caller_id), random by weight without one; null when no experiment runs. Studio
   * test-talk on a draft and flow-test runs never ask.
   */
  async experimentArm(accountId: string, flowId: string, callerId: unknown): Promise<SessionExperiment | null> {
    return this.armOf(await this.deps.store.experiments.running(accountId, flowId), callerId);
  }

  /** The arm of a running experiment (read by the caller) a new session is given: experimentArm without its read. */
  armOf(experiment: Experiment | null, callerId: unknown): SessionExperiment | null {
    return experiment ? { id: experiment.id, arm: chooseArm(experiment.id, experiment.arms, callerIdOf(callerId)) } : null;
  }

  /**
   * A new real session's flow and its experiment arm (none for a draft: the studio's test-talk is
   * no real session). The running experiment and the flow are read at once, since a session's
   * start waits on each store round trip in turn.
   */
  async prepareFlowAndArm(accountId: string, flowId: string, options: { draft: boolean; callerId: unknown }): Promise<{ flow: PreparedFlow; experiment: SessionExperiment | null }> {
    const [experiment, stored] = await Promise.all([options.draft ? null : this.experimentArm(accountId, flowId, options.callerId), this.deps.store.flows.get(accountId, flowId)]);
    const flow = await this.prepareFlow(accountId, flowId, { draft: options.draft, version: experiment?.arm ?? null }, stored);
    return { flow, experiment };
  }

  /** `stored`: the flow's row when the caller read it already. */
  private async flowSource(accountId: string, flowId: string, draft: boolean, version: number | null, stored?: Flow | null): Promise<FlowSource> {
    const flow = stored === undefined ? await this.deps.store.flows.get(accountId, flowId) : stored;
    if (!flow) throw new EngineRefusal('flow_not_found', `No flow with the id "${flowId}".`);
    // An experiment's arm: that published version, whichever one is live.
    if (!draft && version !== null && version !== flow.publishedVersion) {
      const chosen = await this.deps.store.flowVersions.get(accountId, flowId, version);
      if (!chosen) throw new EngineRefusal('flow_not_found', `The flow "${flowId}" has no version ${version}.`);
      return { key: `${flowId}@${version}`, yaml: chosen.yamlContent, version, draft: false, stamp: `v${version}` };
    }
    // No draft: the designer's text is the published one, and that is what runs.
    const unpublished = draft && flow.hasDraft ? await this.deps.store.flowVersions.getDraft(accountId, flowId) : null;
    if (unpublished) return { key: `${flowId}#draft`, yaml: unpublished.yamlContent, version: null, draft: true, stamp: unpublished.etag };
    return { key: flowId, yaml: flow.yamlContent, version: flow.publishedVersion, draft: false, stamp: `v${flow.publishedVersion}` };
  }

  /** Parsed here only without the worker pool, or for a text saved since it was prepared. */
  private parsedDocument(source: FlowSource): FlowDocument | null {
    const cached = this.parsedFlows.get(source.key);
    if (cached && cached.yaml === source.yaml) return cached.document;
    const document = parseFlow(source.yaml).document;
    this.remember(source.key, source.yaml, document);
    return document;
  }

  private refuseInvalid(source: FlowSource, document: FlowDocument | null): FlowDocument {
    if (document) return document;
    // Published versions were validated on save; a draft may have errors (it is a draft).
    const message = source.draft
      ? 'The draft of this flow has errors, so it cannot run; fix them (the editor lists them under Problems) and try again.'
      : `The flow "${source.key}" does not validate any more; open it in the editor.`;
    throw new EngineRefusal('invalid_flow', message);
  }

  private remember(key: string, yaml: string, document: FlowDocument | null): void {
    this.parsedFlows.delete(key);
    this.parsedFlows.set(key, { yaml, document });
    if (this.parsedFlows.size > PARSED_FLOWS_KEPT) this.parsedFlows.delete(this.parsedFlows.keys().next().value!);
  }

  /** Creates and starts a session on an open transport, in the place its admission took. */
  private start(request: StartRequest, providers: AccountProviders, output: SessionOutput, slot: Slot): VoiceSession {
    const { record } = request;
    // The flow was read and parsed at admission (prepareFlow), off this synchronous path.
    if (record.flowId && !request.flow) throw new Error('a session with a flow starts with the document prepareFlow() gave');
    const flow = request.flow ?? null;
    const { stt, llm, tts } = providers.providers;
    const log = this.deps.sessionStarting?.({ record, providers: { stt: stt?.provider ?? null, llm: llm?.provider ?? null, llmModel: llm?.model ?? null, tts: tts.provider } }) ?? this.deps.log;
    let session: VoiceSession | null = null;
    const meter =
      providers.ratePerMinute > 0
        ? new SessionMeter(
            this.deps.store.credits,
            record.accountId,
            record.id,
            providers.partPrices,
            {
              onExhausted: (balance) => {
                output.sendEvent({ type: 'credits_exhausted', balance_usd_cents: balance });
                void session?.end('credits_exhausted');
              },
              onError: (error) => {
                log.error({ err: error, session: record.id }, 'could not charge a session minute');
                void session?.end('error');
              },
            },
            this.deps.minuteMs,
          )
        : null;
    // `settings.recording: true` in the flow records the call as if the session had asked.
    const recording = record.record || flow?.settings?.recording === true ? (this.deps.observer?.recording?.(record, output.lineAudio?.sampleRate ?? ENGINE_SAMPLE_RATE) ?? null) : null;
    // A phone line's transport records what was on the line; other sessions the engine's own audio.
    const engineTap = recording && !output.lineAudio ? recording : null;
    if (recording && output.lineAudio) output.lineAudio.record(recording);
    session = new VoiceSession(
      {
        id: record.id,
        accountId: record.accountId,
        flowId: record.flowId,
        flow,
        context: record.context,
        metadata: record.metadata,
        transport: record.transport,
        assistantPrompt: this.deps.assistantPrompt,
        allowSimulator: request.allowSimulator,
        language: flow?.settings?.language ?? this.deps.language,
        ...(this.deps.turnDefaults ? { turnDefaults: this.deps.turnDefaults } : {}),
        ...(this.deps.turnModel ? { turnModel: this.deps.turnModel } : {}),
        providers: withFlowVoiceIn(withUsageTold(meter ? meteredProviders(providers.providers, (part) => meter.used(part)) : providers.providers, record.id, this.deps.observer), flow),
        userInput: this.deps.userInput,
        meter,
        hooks: this.deps.hooks,
        clock: this.clock,
        log,
        recordEnd: async (end) => {
          // A client that sees the session ended and reads its events finds all of them up to the end.
          await this.deps.observer?.flush?.(record.id);
          await this.deps.store.sessions.end(record.id, end);
        },
        callerAudioTap: engineTap ? (pcm) => engineTap.caller(pcm) : undefined,
        callerAudioLine: request.callerAudioLine,
        maxDurationMs: this.deps.maxSessionMs,
        idleEndMs: this.deps.idleEndMs,
        // An ending session does no more work for its account: a restarted WebRTC peer's new
        // session may take the place at once.
        onEnding: () => slot.release(),
        sendToolRequest: this.deps.sendToolRequest ?? null,
        ...(request.leaveVoicemail ? { leaveVoicemail: true } : {}),
      },
      {
        sendEvent: (event) => {
          this.deps.observer?.event(record.id, event);
          output.sendEvent(event);
        },
        sendAudio: (frame) => {
          engineTap?.agent(frame);
          output.sendAudio(frame);
        },
        close: (code, reason) => {
          slot.release();
          this.sessions.delete(session!);
          if (this.sessions.size === 0) for (const drained of this.drained.splice(0)) drained();
          void recording?.close();
          this.deps.observer?.closed(record.id);
          output.close(code, reason);
        },
        // A phone call's line control passes straight through to its transport.
        ...(output.transfer ? { transfer: output.transfer.bind(output) } : {}),
        ...(output.sendDigits ? { sendDigits: output.sendDigits.bind(output) } : {}),
      },
    );
    this.sessions.add(session);
    session.start().catch((error: unknown) => {
      log.error({ err: error, session: record.id }, 'session failed to start');
      void session!.end('error');
    });
    // Admitted just before the server began to close: it ends with the others.
    if (this.closing) void session.end('server_shutdown');
    return session;
  }

  /** Ends every live session (server shutdown) and waits for their records. */
  /** True from the start of a drain or a close: no new session is admitted. */
  get shuttingDown(): boolean {
    return this.closing;
  }

  /**
   * Takes no new sessions and lets the live ones finish on their own: resolves once the last has
   * ended, or after `withinMs` with the rest still live (close() then ends them).
   */
  async drain(withinMs: number): Promise<void> {
    this.closing = true;
    if (this.sessions.size === 0) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const at = this.drained.indexOf(done);
        if (at >= 0) this.drained.splice(at, 1);
        resolve();
      }, withinMs);
      this.drained.push(done);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.sessions].map((s) => s.end('server_shutdown')));
  }
}
