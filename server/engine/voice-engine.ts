// The voice engine as the transports see it: starts sessions for an account (providers, flow,
// metering, hooks, the session record), keeps the live ones, and ends them all on shutdown.
import { parseFlow } from '../flow/parse.ts';
import type { FlowDocument } from '../flow/types.ts';
import type { Session, Store } from '../store/store.ts';
import { AudioClock } from './audio-out.ts';
import type { SessionHooks } from './hooks.ts';
import { meteredProviders } from './metered-providers.ts';
import type { ServerEvent } from '../protocol/events.ts';
import { checkFirstMinute } from '../billing/admission.ts';
import { SessionMeter } from '../billing/metering.ts';
import type { AccountProviders } from '../providers/types.ts';
import { VoiceSession, type SessionLogger, type SessionOutput } from './session.ts';
import type { TurnListener, UserTurnInput } from './user-input.ts';

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
  maxSessions: number;
  minuteMs?: number;
  /** Sees every event each session sends its client, then its close (the stored timeline). */
  observer?: SessionObserver;
}

/** What a session sent, for whoever keeps it (server/outcomes keeps timelines). Must not throw or block. */
export interface SessionObserver {
  event(sessionId: string, event: ServerEvent): void;
  /** The session sent its last event. */
  closed(sessionId: string): void;
  /** A recording of the call, for a session that asked for one (null: none is kept). */
  recording?(record: Session): SessionRecordingTap | null;
}

/** Both sides of a call as they were heard; called on the audio path, so each call must be cheap. */
export interface SessionRecordingTap {
  caller(pcm: Int16Array): void;
  agent(pcm: Int16Array): void;
  /** The call is over: the rest is written out. */
  close(): Promise<void>;
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
}

export class VoiceEngine {
  private readonly sessions = new Set<VoiceSession>();
  private readonly clock = new AudioClock();
  private closing = false;

  constructor(private readonly deps: VoiceEngineDeps) {}

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

  /** Checked before a session record is created or a connection upgraded. */
  async admit(accountId: string): Promise<AccountProviders> {
    if (this.closing || this.sessions.size >= this.deps.maxSessions) {
      throw new EngineRefusal('at_capacity', 'The voice engine is at capacity; try again shortly.');
    }
    const providers = await this.deps.providersFor(accountId);
    const credit = checkFirstMinute(this.deps.store.credits.balance(accountId), providers.ratePerMinute);
    if (!credit.ok) throw new EngineRefusal('insufficient_credits', credit.message);
    return providers;
  }

  /** Loads and validates an account's flow for a session. */
  /** The latest parsed version of recently run flows, oldest first (flow ids are unique across accounts). */
  private readonly parsedFlows = new Map<string, { yaml: string; document: FlowDocument | null }>();

  loadFlow(accountId: string, flowId: string): FlowDocument {
    const flow = this.deps.store.flows.get(accountId, flowId);
    if (!flow) throw new EngineRefusal('flow_not_found', `No flow with the id "${flowId}".`);
    const cached = this.parsedFlows.get(flowId);
    let document: FlowDocument | null;
    if (cached && cached.yaml === flow.yamlContent) {
      document = cached.document;
    } else {
      // Parsing a flow takes milliseconds on the event loop that paces every session's audio, so
      // each stored version is parsed once; the runtime only reads the document.
      document = parseFlow(flow.yamlContent).document;
      this.parsedFlows.delete(flowId);
      this.parsedFlows.set(flowId, { yaml: flow.yamlContent, document });
      if (this.parsedFlows.size > PARSED_FLOWS_KEPT) this.parsedFlows.delete(this.parsedFlows.keys().next().value!);
    }
    // Stored flows were validated on save; a document that no longer validates is refused, not run.
    if (!document) throw new EngineRefusal('invalid_flow', `The flow "${flowId}" does not validate any more; open it in the editor.`);
    return document;
  }

  /** Creates and starts a session on an open transport. */
  start(request: StartRequest, providers: AccountProviders, output: SessionOutput): VoiceSession {
    const { record } = request;
    const flow = record.flowId ? this.loadFlow(record.accountId, record.flowId) : null;
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
                this.deps.log.error({ err: error, session: record.id }, 'could not charge a session minute');
                void session?.end('error');
              },
            },
            this.deps.minuteMs,
          )
        : null;
    const recording = record.record ? (this.deps.observer?.recording?.(record) ?? null) : null;
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
        language: this.deps.language,
        providers: meter ? meteredProviders(providers.providers, (part) => meter.used(part)) : providers.providers,
        userInput: this.deps.userInput,
        meter,
        hooks: this.deps.hooks,
        clock: this.clock,
        log: this.deps.log,
        recordEnd: async (end) => {
          await this.deps.store.sessions.end(record.id, end);
        },
        callerAudioTap: recording ? (pcm) => recording.caller(pcm) : undefined,
      },
      {
        sendEvent: (event) => {
          this.deps.observer?.event(record.id, event);
          output.sendEvent(event);
        },
        sendAudio: (frame) => {
          recording?.agent(frame);
          output.sendAudio(frame);
        },
        close: (code, reason) => {
          this.sessions.delete(session!);
          void recording?.close();
          this.deps.observer?.closed(record.id);
          output.close(code, reason);
        },
      },
    );
    this.sessions.add(session);
    session.start().catch((error: unknown) => {
      this.deps.log.error({ err: error, session: record.id }, 'session failed to start');
      void session!.end('error');
    });
    return session;
  }

  /** Ends every live session (server shutdown) and waits for their records. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.sessions].map((s) => s.end('server_shutdown')));
  }
}
