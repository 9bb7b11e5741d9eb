// Each voice session as an OpenTelemetry trace (docs/hosting.md#prometheus-and-opentelemetry): a
// root span for the call, a span per agent turn with its parts (end of turn, speech to text, the
// model's first token, tool calls and their http requests, speech's first audio) as children,
// and the flow's states as events on the call.
//
// The turn's spans are built once the turn is over, from the `metrics` waterfall the engine
// already measures and sends (engine/turn-timing.ts) and the events around it, with explicit
// start and end times. Nothing is added to the stages or to the path that paces audio: a
// session's event costs a few field writes here, and a turn's spans are made once per turn. The
// parts' places in time are the waterfall's: end of turn and speech to text follow the caller's
// last voiced frame, the model request follows the transcript (a typed turn: its arrival), and
// speech's first audio ends at the first frame out.
//
// What a span may carry: names, vendors, models, states, counts, timings, HTTP status. Never a
// credential, an http tool's URL beyond its host, a tool's arguments or what was said, unless the
// operator turns on --otel-include-text (then transcripts go into the turn's attributes).
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type ReadableSpan,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import type { HookContext, HookEvent } from '../engine/hooks.ts';
import type { StartingSession } from '../engine/voice-engine.ts';
import type { ServerEvent, TurnMetrics } from '../protocol/events.ts';

export interface TracingOptions {
  /** The full OTLP/HTTP traces URL. */
  url: string;
  headers: Record<string, string>;
  serviceName: string;
  sampler: string;
  samplerArg: number | undefined;
  includeText: boolean;
  /** Spans that never reached the collector. */
  onDropped(count: number, reason: string): void;
  /** Spans waiting for export at most; past it new ones are dropped (the SDK's bounded queue). */
  maxQueueSize?: number;
  /** Delay between two exports (ms); tests shorten it. */
  scheduledDelayMillis?: number;
  exportTimeoutMillis?: number;
}

/** How long closing waits for the last spans to go out: an unreachable collector must not hold up a shutdown. */
const FLUSH_ON_CLOSE_MS = 2_000;

/** OTEL_EXPORTER_OTLP_HEADERS: `key=value,key2=value2`, values URL-encoded. */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const key = pair.slice(0, at).trim();
    let value = pair.slice(at + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // Kept as written.
    }
    if (key) headers[key] = value;
  }
  return headers;
}

/** The traces URL from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, or the base endpoint + /v1/traces. */
export function tracesUrl(base: string | undefined, traces: string | undefined): string | null {
  if (traces) return traces;
  if (!base) return null;
  return /\/v1\/traces\/?$/.test(base) ? base : `${base.replace(/\/+$/, '')}/v1/traces`;
}

export function samplerFor(name: string, arg: number | undefined): Sampler {
  const ratio = new TraceIdRatioBasedSampler(arg ?? 1);
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** Counts the spans of every export that failed (the collector unreachable, refusing, or too slow). */
class CountingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly onDropped: (count: number, reason: string) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) this.onDropped(spans.length, 'export_failed');
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** Milliseconds since the epoch, finer than Date.now(): the spans' explicit times. */
const now = () => performance.timeOrigin + performance.now();

interface ToolRecord {
  name: string;
  status: string;
  source: string;
  reason: string | null;
  at: number;
  request?: { method: string; host: string; status: number | null; ok: boolean; durationMs: number; at: number; error: boolean };
}

interface TurnRecord {
  metrics: TurnMetrics;
  /** When the first agent audio frame went out (the metrics event's arrival). */
  firstAudioAt: number;
  lastAt: number;
  agentChars: number;
  userText: string;
  agentText: string;
  /** The tokens of the turn's model responses, summed (a turn with tool calls asks the model more than once); null while no vendor said. */
  tokens: Tokens | null;
}

interface Tokens {
  input: number;
  output: number;
}

interface SessionTrace {
  root: Span;
  context: Context;
  providers: StartingSession['providers'];
  turn: TurnRecord | null;
  /** Tool calls not yet in a turn's span (they came before its first audio). */
  tools: ToolRecord[];
  /** User text heard since the last turn (kept only with includeText). */
  userText: string;
  /** The agent's words spoken before the turn's first audio (they are sent as they stream): counted into it. */
  agentChars: number;
  agentText: string;
  /** Tokens of model responses that finished before the turn's first audio. */
  tokens: Tokens | null;
}

export class SessionTracing {
  private readonly provider: TracerProvider;
  private readonly tracer: Tracer;
  private readonly sessions = new Map<string, SessionTrace>();

  constructor(private readonly options: TracingOptions) {
    const exporter = new CountingExporter(new OTLPTraceExporter({ url: options.url, headers: options.headers, timeoutMillis: options.exportTimeoutMillis ?? 10_000 }), options.onDropped);
    this.provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': options.serviceName }),
      sampler: samplerFor(options.sampler, options.samplerArg),
      spanProcessors: [
        new BatchSpanProcessor({
          exporter,
          maxQueueSize: options.maxQueueSize ?? 2048,
          scheduledDelayMillis: options.scheduledDelayMillis ?? 5000,
          exportTimeoutMillis: options.exportTimeoutMillis ?? 10_000,
        }),
      ],
    });
    this.tracer = this.provider.getTracer('voxflow');
  }

  /** The app's tracer provider, for the API's request spans (@fastify/otel). */
  get tracerProvider(): TracerProvider {
    return this.provider;
  }

  /** Opens the call's root span; its trace id goes into the session's log lines. */
  sessionStarting(info: StartingSession): string | null {
    const { record, providers } = info;
    const attributes: Attributes = {
      'voxflow.session.id': record.id,
      'voxflow.account.id': record.accountId,
      'voxflow.transport': record.transport,
      'voxflow.mode': record.mode,
      'voxflow.stt.provider': providers.stt ?? 'none',
      'voxflow.llm.provider': providers.llm ?? 'none',
      'voxflow.tts.provider': providers.tts,
    };
    if (record.flowId) attributes['voxflow.flow.id'] = record.flowId;
    if (record.flowVersion !== null) attributes['voxflow.flow.version'] = record.flowVersion;
    if (record.flowDraft) attributes['voxflow.flow.draft'] = true;
    if (record.direction) attributes['voxflow.call.direction'] = record.direction;
    if (providers.llmModel) attributes['gen_ai.request.model'] = providers.llmModel;
    const root = this.tracer.startSpan('call', { kind: SpanKind.SERVER, attributes, startTime: now() }, ROOT_CONTEXT);
    this.sessions.set(record.id, { root, context: trace.setSpan(ROOT_CONTEXT, root), providers, turn: null, tools: [], userText: '', agentChars: 0, agentText: '', tokens: null });
    const { traceId, traceFlags } = root.spanContext();
    // An unsampled call has no trace to look up: its log lines say nothing of one.
    return traceFlags & 1 ? traceId : null;
  }

  hook(event: HookEvent, context: HookContext): void {
    const session = this.sessions.get(context.sessionId);
    if (!session) return;
    if (event.type === 'state_changed') session.root.addEvent('state_changed', { 'voxflow.state.from': event.from, 'voxflow.state.to': event.to, 'voxflow.tool': event.tool }, now());
    else if (event.type === 'ended') {
      session.root.setAttributes({ 'voxflow.end_reason': event.reason, 'voxflow.duration_secs': event.durationSecs, 'voxflow.credits_charged_cents': event.creditsChargedCents });
    }
  }

  event(sessionId: string, event: ServerEvent): void {
    const session = this.sessions.get(sessionId);
    if (!session || !session.root.isRecording()) return;
    const at = now();
    switch (event.type) {
      case 'flow_state':
        session.root.addEvent('flow_state', { 'voxflow.state': event.state }, at);
        return;
      case 'user_started_speaking':
        this.closeTurn(session);
        return;
      case 'transcript':
        if (event.role === 'user' && event.final) {
          this.closeTurn(session);
          if (this.options.includeText) session.userText = session.userText ? `${session.userText} ${event.text}` : event.text;
        } else if (event.role === 'agent' && event.final) {
          const into = session.turn ?? session;
          into.agentChars += event.text.length;
          if (this.options.includeText) into.agentText = into.agentText ? `${into.agentText} ${event.text}` : event.text;
        }
        return;
      case 'tool_call':
        session.tools.push({ name: event.name, status: event.status, source: event.source, reason: event.reason, at });
        if (session.turn) session.turn.lastAt = at;
        return;
      case 'tool_result': {
        const record = [...session.tools].reverse().find((t) => t.name === event.name && !t.request);
        if (record) record.request = { method: event.method, host: hostOf(event.url), status: event.http_status, ok: event.ok, durationMs: event.duration_ms, at, error: !event.ok };
        if (session.turn) session.turn.lastAt = at;
        return;
      }
      case 'agent_stopped_speaking':
        if (session.turn) session.turn.lastAt = at;
        return;
      case 'metrics':
        this.closeTurn(session);
        session.turn = { metrics: event, firstAudioAt: at, lastAt: at, agentChars: session.agentChars, userText: session.userText, agentText: session.agentText, tokens: session.tokens };
        session.userText = '';
        session.agentChars = 0;
        session.agentText = '';
        session.tokens = null;
        return;
      case 'error':
        session.root.addEvent('error', { 'voxflow.error.code': event.code, 'voxflow.error.fatal': event.fatal }, at);
        return;
      case 'transfer':
        session.root.addEvent('transfer', { 'voxflow.transfer.mode': event.mode, 'voxflow.transfer.status': event.status }, at);
        return;
      case 'interrupted':
        session.root.addEvent('interrupted', {}, at);
        return;
      default:
        return;
    }
  }

  /**
   * The tokens one model response took. A response usually finishes after the turn's first audio
   * (its words are spoken as they stream): it counts into that turn, still open until the caller's
   * next turn; one that finished before (a round of tool calls) waits for the turn's first audio.
   */
  modelUsage(sessionId: string, usage: { inputTokens: number; outputTokens: number }): void {
    const session = this.sessions.get(sessionId);
    if (!session || !session.root.isRecording()) return;
    const into = session.turn ?? session;
    into.tokens = { input: (into.tokens?.input ?? 0) + usage.inputTokens, output: (into.tokens?.output ?? 0) + usage.outputTokens };
  }

  /** The session sent its last event: its last turn and the call end. */
  closed(sessionId: string): void {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.sessions.delete(sessionId);
    this.closeTurn(session);
    // Tool calls of a turn that never spoke (the model failed after them): under the call.
    for (const tool of session.tools.splice(0)) this.toolSpan(tool, session.context);
    session.root.end(now());
  }

  /** A turn's spans, built now that it is over from the times recorded while it ran. */
  private closeTurn(session: SessionTrace): void {
    const turn = session.turn;
    if (!turn) return;
    session.turn = null;
    const m = turn.metrics;
    const { stt, llm, llmModel, tts } = session.providers;
    const end = turn.firstAudioAt;
    const start = end - (m.voice_to_voice_ms ?? 0);
    const tools = session.tools.splice(0);
    const turnStart = Math.min(start, ...tools.map((t) => t.at));
    const attributes: Attributes = { 'voxflow.turn': m.turn, 'voxflow.tts.characters': turn.agentChars };
    for (const [key, value] of Object.entries(m)) if (key !== 'turn' && value !== null) attributes[`voxflow.${key}`] = value;
    if (this.options.includeText) {
      if (turn.userText) attributes['voxflow.user_text'] = turn.userText;
      if (turn.agentText) attributes['voxflow.agent_text'] = turn.agentText;
    }
    const span = this.tracer.startSpan('turn', { attributes, startTime: turnStart }, session.context);
    const context = trace.setSpan(session.context, span);
    const child = (name: string, from: number, ms: number | null, attrs: Attributes) => {
      if (ms === null) return from;
      this.tracer.startSpan(name, { attributes: attrs, startTime: from }, context).end(from + ms);
      return from + ms;
    };
    let at = start;
    at = child('end_of_turn', at, m.endpointing_ms, {});
    at = child('stt', at, m.stt_ms, { 'voxflow.provider': stt ?? 'none' });
    child('llm', at, m.llm_ttft_ms, {
      'gen_ai.system': llm ?? 'none',
      ...(llmModel ? { 'gen_ai.request.model': llmModel } : {}),
      'voxflow.time_to_first_token_ms': m.llm_ttft_ms ?? 0,
      // OpenTelemetry's generative-AI names for token counts.
      ...(turn.tokens ? { 'gen_ai.usage.input_tokens': turn.tokens.input, 'gen_ai.usage.output_tokens': turn.tokens.output } : {}),
    });
    if (m.tts_ttfb_ms !== null) child('tts', end - m.tts_ttfb_ms, m.tts_ttfb_ms, { 'voxflow.provider': tts, 'voxflow.tts.characters': turn.agentChars, 'voxflow.time_to_first_audio_ms': m.tts_ttfb_ms });
    for (const tool of tools) this.toolSpan(tool, context);
    span.end(Math.max(turn.lastAt, end, ...tools.map((t) => t.request?.at ?? t.at)));
  }

  private toolSpan(tool: ToolRecord, parent: Context): void {
    const attributes: Attributes = { 'voxflow.tool.name': tool.name, 'voxflow.tool.status': tool.status, 'voxflow.tool.source': tool.source };
    if (tool.reason) attributes['voxflow.tool.rejected_because'] = tool.reason;
    const span = this.tracer.startSpan(`tool ${tool.name}`, { attributes, startTime: tool.at }, parent);
    const request = tool.request;
    if (request) {
      const started = request.at - request.durationMs;
      const http = this.tracer.startSpan(
        'http_tool_request',
        {
          kind: SpanKind.CLIENT,
          startTime: started,
          attributes: {
            'http.request.method': request.method,
            'server.address': request.host,
            ...(request.status !== null ? { 'http.response.status_code': request.status } : {}),
            'voxflow.duration_ms': request.durationMs,
          },
        },
        trace.setSpan(parent, span),
      );
      if (request.error) http.setStatus({ code: SpanStatusCode.ERROR });
      http.end(request.at);
    }
    if (tool.status === 'rejected') span.setStatus({ code: SpanStatusCode.ERROR, message: 'rejected' });
    span.end(request?.at ?? tool.at);
  }

  /** Ends what is open and sends the last spans, waiting a bounded time for the collector. */
  async close(): Promise<void> {
    for (const id of [...this.sessions.keys()]) this.closed(id);
    const timer = new Promise<void>((resolve) => setTimeout(resolve, FLUSH_ON_CLOSE_MS).unref());
    await Promise.race([this.provider.shutdown().catch(() => undefined), timer]);
  }
}

/** An http tool's host only: its path and query may carry what the caller said. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'unknown';
  }
}
