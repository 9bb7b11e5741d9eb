// The server's metrics for Prometheus (GET /metrics, docs/hosting.md#prometheus-and-opentelemetry),
// in a registry of the app's own: two servers in one process (tests, the desktop app) never
// share or clash over a series. They are fed from what the server already reports rather than
// from each stage: the session hooks (started, ended, tool calls), the events each session sends
// its client (the per-turn `metrics` waterfall, http tools' results, provider errors), the store's
// calls and the webhook dispatcher's attempts. Everything done on a session's path is O(1): a
// counter added to, a histogram observed; what takes longer (counting the outbox) waits for a
// scrape. Labels are bounded: transports, end reasons, vendor names, status classes, never a
// session's id, and an account's id only when the operator asks (--metrics-per-account).
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ServerEvent } from '../protocol/events.ts';
import type { HookContext, HookEvent } from '../engine/hooks.ts';
import type { ModelUsage } from '../engine/voice-engine.ts';
import type { Store } from '../store/store.ts';

/** Seconds: a turn's parts are tens of milliseconds to seconds; a whole turn up to ten. */
const TURN_BUCKETS = [0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10];
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const DELIVERY_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600];

/** Where the engine stands, read at a scrape. */
export interface MetricsSources {
  /** Frames sent after their play time (the process was busy), and in a reply waiting for its audio, since start. */
  audioPacing?: () => { lateFrames: number; underrunFrames: number };
  /** Flow jobs waiting for a worker, and running. */
  flowJobs?: () => { queued: number; running: number };
  /** Webhook deliveries pending (counted up to a bound), read from the store at a scrape. */
  webhookOutboxDepth?: () => Promise<number>;
}

export interface SessionLabels {
  transport: string;
  account: string;
  stt: string;
  llm: string;
  tts: string;
}

interface SessionState extends SessionLabels {
  live?: boolean;
  turnLabels: {
    voiceToVoice: { stt_provider: string; llm_provider: string; tts_provider: string };
    endpointing: { stt_provider: string };
    stt: { provider: string };
    llm: { provider: string };
    tts: { provider: string };
  };
}

type ProviderKind = 'stt' | 'llm' | 'tts';
const ERROR_KINDS: Record<string, ProviderKind | 'vad'> = { stt_failed: 'stt', llm_failed: 'llm', tts_failed: 'tts', vad_failed: 'vad' };

/** Names that read, by their first word, as a store read; any other call counts as a write. */
const STORE_READ = /^(get|list|find|count|balance|due|next|sealed|subscribers|missing|read|has|is|load|usage|stats|of|for|by|all|live|recent|latest|lookup|search|check|writable|open|peek|summary|detail|page)/i;

export class AppMetrics {
  readonly registry = new Registry();
  private readonly perAccount: boolean;
  /** Sessions between their start and their end; `live` once counted in voxflow_sessions_live. */
  private readonly sessions = new Map<string, SessionState>();
  private readonly loopDelay: IntervalHistogram;

  private readonly live: Gauge<'transport'>;
  private readonly started: Counter<string>;
  private readonly ended: Counter<string>;
  private readonly credits: Counter<string>;
  private readonly voiceToVoice: Histogram<'stt_provider' | 'llm_provider' | 'tts_provider'>;
  private readonly endpointing: Histogram<'stt_provider'>;
  private readonly stt: Histogram<'provider'>;
  private readonly llmFirstToken: Histogram<'provider'>;
  private readonly ttsFirstAudio: Histogram<'provider'>;
  private readonly serverPart: Histogram<never>;
  private readonly providerErrors: Counter<'kind' | 'provider'>;
  private readonly toolCalls: Counter<'status' | 'source'>;
  private readonly modelTokens: Counter<string>;
  private readonly toolRequests: Counter<'status_class'>;
  private readonly toolRequestSeconds: Histogram<'status_class'>;
  private readonly deliveries: Counter<'outcome'>;
  private readonly deliverySeconds: Histogram<never>;
  private readonly storeSeconds: Histogram<'repository' | 'operation' | 'kind'>;
  readonly spansDropped: Counter<'reason'>;

  constructor(options: { perAccount: boolean; sources?: MetricsSources }) {
    this.perAccount = options.perAccount;
    const registers = [this.registry];
    const sources = options.sources ?? {};
    const account = this.perAccount ? ['account_id'] : [];
    collectDefaultMetrics({ register: this.registry, prefix: 'voxflow_' });

    this.live = new Gauge({ name: 'voxflow_sessions_live', help: 'Voice sessions in progress on this node, by transport', labelNames: ['transport'], registers });
    this.started = new Counter({ name: 'voxflow_sessions_started_total', help: 'Voice sessions started, by transport and mode', labelNames: ['transport', 'mode', ...account], registers });
    this.ended = new Counter({ name: 'voxflow_sessions_ended_total', help: 'Voice sessions ended, by transport and end reason', labelNames: ['transport', 'reason', ...account], registers });
    this.credits = new Counter({ name: 'voxflow_credits_charged_cents_total', help: 'Credits charged for ended sessions, in US cents', labelNames: ['transport', ...account], registers });
    this.voiceToVoice = new Histogram({
      name: 'voxflow_turn_voice_to_voice_seconds',
      help: "From the caller's last voiced frame (a typed turn: its arrival) to the agent's first audio frame out",
      labelNames: ['stt_provider', 'llm_provider', 'tts_provider'],
      buckets: TURN_BUCKETS,
      registers,
    });
    this.endpointing = new Histogram({ name: 'voxflow_turn_endpointing_seconds', help: 'Last voiced frame to the end of the turn (the end-of-turn silence)', labelNames: ['stt_provider'], buckets: TURN_BUCKETS, registers });
    this.stt = new Histogram({ name: 'voxflow_turn_stt_seconds', help: 'End of the turn to its final transcript, by speech-to-text vendor', labelNames: ['provider'], buckets: TURN_BUCKETS, registers });
    this.llmFirstToken = new Histogram({ name: 'voxflow_turn_llm_first_token_seconds', help: "The turn's first model request to its first chunk, by model vendor", labelNames: ['provider'], buckets: TURN_BUCKETS, registers });
    this.ttsFirstAudio = new Histogram({ name: 'voxflow_turn_tts_first_audio_seconds', help: "The turn's first speech request to its first audio, by text-to-speech vendor", labelNames: ['provider'], buckets: TURN_BUCKETS, registers });
    this.serverPart = new Histogram({ name: 'voxflow_turn_server_seconds', help: "What the server's own code adds to a turn: voice-to-voice less its four measured parts", buckets: TURN_BUCKETS, registers });
    this.providerErrors = new Counter({ name: 'voxflow_provider_errors_total', help: 'Provider failures sessions reported, by kind (stt, llm, tts, vad) and vendor', labelNames: ['kind', 'provider'], registers });
    // By vendor and direction (and account with --metrics-per-account): model names are the
    // accounts' own choice, an unbounded label.
    this.modelTokens = new Counter({
      name: 'voxflow_llm_tokens_total',
      help: "Tokens the model's responses took in sessions, by vendor and direction (input: the prompt, output: the answer), as the vendor reported them",
      labelNames: ['provider', 'direction', ...account],
      registers,
    });
    this.toolCalls = new Counter({ name: 'voxflow_tool_calls_total', help: 'Tool calls in sessions, by outcome (accepted, rejected) and who made them', labelNames: ['status', 'source'], registers });
    this.toolRequests = new Counter({ name: 'voxflow_http_tool_requests_total', help: "Flow http tools' requests, by status class (2xx … 5xx, or none when no answer came)", labelNames: ['status_class'], registers });
    this.toolRequestSeconds = new Histogram({ name: 'voxflow_http_tool_request_seconds', help: "Flow http tools' requests, how long each took", labelNames: ['status_class'], buckets: TURN_BUCKETS, registers });
    this.deliveries = new Counter({ name: 'voxflow_webhook_delivery_attempts_total', help: 'Webhook delivery attempts, by outcome (delivered, failed)', labelNames: ['outcome'], registers });
    this.deliverySeconds = new Histogram({ name: 'voxflow_webhook_delivery_latency_seconds', help: 'From an event put in the webhook outbox to its delivery', buckets: DELIVERY_BUCKETS, registers });
    this.storeSeconds = new Histogram({
      name: 'voxflow_store_operation_seconds',
      help: "The store's calls, by repository, operation and kind (read, write), how long each took",
      labelNames: ['repository', 'operation', 'kind'],
      buckets: STORE_BUCKETS,
      registers,
    });
    this.spansDropped = new Counter({ name: 'voxflow_otel_spans_dropped_total', help: 'Spans that never reached the collector (its export failed or timed out)', labelNames: ['reason'], registers });

    // The event loop's delay: what every session's paced audio waits behind.
    this.loopDelay = monitorEventLoopDelay({ resolution: 10 });
    this.loopDelay.enable();
    const loopDelay = this.loopDelay;
    new Gauge({
      name: 'voxflow_event_loop_delay_seconds',
      help: 'Event-loop delay since the last scrape (perf_hooks.monitorEventLoopDelay), by quantile',
      labelNames: ['quantile'],
      registers,
      collect() {
        const seconds = (ns: number) => (Number.isFinite(ns) ? ns / 1e9 : 0);
        this.set({ quantile: '0.5' }, seconds(loopDelay.percentile(50)));
        this.set({ quantile: '0.99' }, seconds(loopDelay.percentile(99)));
        this.set({ quantile: '1' }, seconds(loopDelay.max));
        loopDelay.reset();
      },
    });
    const pacing = sources.audioPacing;
    if (pacing) {
      new Gauge({
        name: 'voxflow_audio_frames_late_total',
        help: 'Agent audio frames sent after their play time since start: busy=the process was busy (a gap the caller heard), underrun=the reply waited for its audio',
        labelNames: ['cause'],
        registers,
        collect() {
          const { lateFrames, underrunFrames } = pacing();
          this.set({ cause: 'busy' }, lateFrames);
          this.set({ cause: 'underrun' }, underrunFrames);
        },
      });
    }
    const flowJobs = sources.flowJobs;
    if (flowJobs) {
      new Gauge({
        name: 'voxflow_flow_jobs',
        help: 'Flow-document jobs (parse, validate, edit) by state: queued for a worker, or running',
        labelNames: ['state'],
        registers,
        collect() {
          const { queued, running } = flowJobs();
          this.set({ state: 'queued' }, queued);
          this.set({ state: 'running' }, running);
        },
      });
    }
    const outbox = sources.webhookOutboxDepth;
    if (outbox) {
      new Gauge({
        name: 'voxflow_webhook_outbox_pending',
        help: `Webhook deliveries not yet delivered nor given up (counted up to ${OUTBOX_COUNT_BOUND})`,
        registers,
        async collect() {
          this.set(await outbox().catch(() => Number.NaN));
        },
      });
    }
  }

  /** The text a scrape gets. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  sessionStarting(sessionId: string, labels: SessionLabels): void {
    // The turn histograms' label sets, built once for the session rather than at each turn.
    this.sessions.set(sessionId, {
      ...labels,
      turnLabels: {
        voiceToVoice: { stt_provider: labels.stt, llm_provider: labels.llm, tts_provider: labels.tts },
        endpointing: { stt_provider: labels.stt },
        stt: { provider: labels.stt },
        llm: { provider: labels.llm },
        tts: { provider: labels.tts },
      },
    });
  }

  hook(event: HookEvent, context: HookContext): void {
    const labels = this.sessions.get(context.sessionId);
    if (!labels) return;
    const account = this.perAccount ? { account_id: context.accountId } : {};
    switch (event.type) {
      case 'started':
        labels.live = true;
        this.live.inc({ transport: labels.transport });
        this.started.inc({ transport: labels.transport, mode: event.mode, ...account });
        return;
      case 'tool_called':
        this.toolCalls.inc({ status: event.status, source: event.source });
        return;
      case 'ended':
        this.sessions.delete(context.sessionId);
        this.live.dec({ transport: labels.transport });
        this.ended.inc({ transport: labels.transport, reason: event.reason, ...account });
        if (event.creditsChargedCents > 0) this.credits.inc({ transport: labels.transport, ...account }, event.creditsChargedCents);
        return;
      default:
        return;
    }
  }

  /** The tokens one model response of a session took. */
  modelUsage(sessionId: string, usage: ModelUsage): void {
    const labels = this.sessions.get(sessionId);
    if (!labels) return;
    const account = this.perAccount ? { account_id: labels.account } : {};
    if (usage.inputTokens > 0) this.modelTokens.inc({ provider: usage.provider, direction: 'input', ...account }, usage.inputTokens);
    if (usage.outputTokens > 0) this.modelTokens.inc({ provider: usage.provider, direction: 'output', ...account }, usage.outputTokens);
  }

  /** One event a session sent its client. */
  event(sessionId: string, event: ServerEvent): void {
    switch (event.type) {
      case 'metrics': {
        const session = this.sessions.get(sessionId);
        if (!session) return;
        const labels = session.turnLabels;
        if (event.voice_to_voice_ms !== null) this.voiceToVoice.observe(labels.voiceToVoice, event.voice_to_voice_ms / 1000);
        if (event.endpointing_ms !== null) this.endpointing.observe(labels.endpointing, event.endpointing_ms / 1000);
        if (event.stt_ms !== null) this.stt.observe(labels.stt, event.stt_ms / 1000);
        if (event.llm_ttft_ms !== null) this.llmFirstToken.observe(labels.llm, event.llm_ttft_ms / 1000);
        if (event.tts_ttfb_ms !== null) this.ttsFirstAudio.observe(labels.tts, event.tts_ttfb_ms / 1000);
        if (event.server_ms !== null) this.serverPart.observe(event.server_ms / 1000);
        return;
      }
      case 'tool_result': {
        const statusClass = event.http_status === null ? 'none' : `${Math.floor(event.http_status / 100)}xx`;
        this.toolRequests.inc({ status_class: statusClass });
        this.toolRequestSeconds.observe({ status_class: statusClass }, event.duration_ms / 1000);
        return;
      }
      case 'error': {
        const kind = ERROR_KINDS[event.code];
        if (!kind) return;
        const labels = this.sessions.get(sessionId);
        const provider = kind === 'vad' ? 'silero' : (labels?.[kind] ?? 'unknown');
        this.providerErrors.inc({ kind, provider });
        return;
      }
      default:
        return;
    }
  }

  /** The session is gone (also one that never reached `ended`, e.g. it failed to start). */
  closed(sessionId: string): void {
    const labels = this.sessions.get(sessionId);
    if (!labels) return;
    // A session that started and closed without its `ended` hook still leaves the live count.
    this.sessions.delete(sessionId);
    if (labels.live) this.live.dec({ transport: labels.transport });
  }

  webhookAttempt(attempt: { delivered: boolean; ageSecs: number }): void {
    this.deliveries.inc({ outcome: attempt.delivered ? 'delivered' : 'failed' });
    if (attempt.delivered) this.deliverySeconds.observe(attempt.ageSecs);
  }

  /**
   * The store, each repository's calls timed. A proxy over each repository: what the rest of
   * the server sees is the same interface.
   */
  timedStore(store: Store): Store {
    const histogram = this.storeSeconds;
    const repositories = new Map<string, unknown>();
    // Each method's timed stand-in is made once, with its labels, not on every call: a request
    // makes several store calls, and building the labels and a closure for each was work on
    // every one of them.
    const wrapRepository = (name: string, repository: object) => {
      const timedMethods = new Map<string, { of: unknown; timed: (...args: unknown[]) => unknown }>();
      return new Proxy(repository, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver) as unknown;
          if (typeof value !== 'function' || typeof property !== 'string') return value;
          const made = timedMethods.get(property);
          if (made?.of === value) return made.timed;
          const labels = { repository: name, operation: property, kind: STORE_READ.test(property) ? 'read' : 'write' };
          const timed = function timed(this: unknown, ...args: unknown[]) {
            const started = performance.now();
            const result = (value as (...a: unknown[]) => unknown).apply(target, args);
            if (result instanceof Promise) {
              return result.finally(() => histogram.observe(labels, (performance.now() - started) / 1000));
            }
            return result;
          };
          timedMethods.set(property, { of: value, timed });
          return timed;
        },
      });
    };
    return new Proxy(store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof property !== 'string' || typeof value !== 'object' || value === null) {
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        }
        let wrapped = repositories.get(property);
        if (!wrapped) repositories.set(property, (wrapped = wrapRepository(property, value)));
        return wrapped;
      },
    });
  }

  close(): void {
    this.loopDelay.disable();
  }
}

/** The outbox is counted up to this many pending deliveries: a scrape reads at most that many rows. */
export const OUTBOX_COUNT_BOUND = 1000;
