// One voice session: audio and control messages in, events and paced agent audio out.
//
//   audio in ─► VAD/turns ─► STT ─► agent (LLM + flow runtime) ─► sentences ─► TTS ─► AudioOut
//
// Control (interrupt, end, barge-in) does not queue behind data: it aborts the turn in flight at
// once and clears the audio queue. What the flow runtime committed stays committed: tool calls
// are applied synchronously together with their history entries, so an interruption can only
// land before or after a call, never half-way (the anchors' most common bug).
import { FlowRuntime, type ToolCallOutcome } from '../flow/runtime.ts';
import type { FlowDocument } from '../flow/types.ts';
import { parseClientMessage, type ClientMessage } from '../protocol/client-messages.ts';
import type { ServerEvent, ToolCallSource } from '../protocol/events.ts';
import { sessionError, type SessionErrorCode } from '../protocol/session-errors.ts';
import { isAbortError } from '../providers/retry.ts';
import {
  ENGINE_SAMPLE_RATE,
  ProviderError,
  type ChatMessage,
  type ChatToolCall,
  type SessionProviders,
  type TextToSpeech,
  type TranscriptionStream,
} from '../providers/types.ts';
import { AudioOut, type AudioClock, type SegmentWriter, type SpokenSentence } from './audio-out.ts';
import type { SessionHooks } from './hooks.ts';
import type { SessionMeter } from '../billing/metering.ts';
import { SentenceSplitter } from './sentence-splitter.ts';
import { TurnTiming } from './turn-timing.ts';
import type { TurnListener, UserTurnInput } from './user-input.ts';

export interface SessionLogger {
  info(object: Record<string, unknown>, message: string): void;
  warn(object: Record<string, unknown>, message: string): void;
  error(object: Record<string, unknown>, message: string): void;
}

export interface SessionSetup {
  id: string;
  accountId: string;
  flowId: string | null;
  /** The flow to run; null for a generic assistant session. */
  flow: FlowDocument | null;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  transport: 'websocket' | 'webrtc';
  /** The system prompt of assistant mode. */
  assistantPrompt: string;
  /** simulate_tool is for the account owner's studio sessions only. */
  allowSimulator: boolean;
  language: string;
  providers: SessionProviders;
  /** Builds the VAD turn tracker; null when no VAD is available (audio then gets an error). */
  userInput: ((listener: TurnListener) => UserTurnInput) | null;
  meter: SessionMeter | null;
  hooks: SessionHooks;
  clock: AudioClock;
  log: SessionLogger;
  /** Records the end in the store; the session waits for it before saying session_ended. */
  recordEnd(end: { reason: string; creditsChargedCents: number }): Promise<void>;
  sttFlushTimeoutMs?: number;
}

export interface SessionOutput {
  sendEvent(event: ServerEvent): void;
  sendAudio(frame: Int16Array): void;
  close(code: number, reason: string): void;
}

export const FALLBACK_LINE = "Sorry, I'm having trouble right now. Could you say that again?";

interface Turn {
  controller: AbortController;
  timing: TurnTiming;
  /** History indexes of the assistant messages this turn added, for a barge-in to rewrite. */
  assistantMessages: number[];
}

export class VoiceSession {
  readonly runtime: FlowRuntime | null;
  private readonly history: ChatMessage[] = [];
  private readonly audioOut: AudioOut;
  private readonly input: UserTurnInput | null;
  private stt: TranscriptionStream | null = null;
  private turn: Turn | null = null;
  private turnCount = 0;
  private userSpeaking = false;
  private startedAt = 0;
  private ended = false;
  private endPromise: Promise<void> | null = null;
  private warned = new Set<SessionErrorCode>();
  private simulatedCalls = 0;
  private readonly lifetime = new AbortController();

  constructor(
    private readonly setup: SessionSetup,
    private readonly output: SessionOutput,
  ) {
    this.runtime = setup.flow ? new FlowRuntime(setup.flow, { context: setup.context }) : null;
    this.audioOut = new AudioOut({
      sendFrame: (frame) => {
        this.output.sendAudio(frame);
        const timing = this.turn?.timing;
        if (timing?.markFirstAudioOut()) this.sendMetrics(timing);
      },
      onStarted: () => this.send({ type: 'agent_started_speaking' }),
      onFinished: () => this.send({ type: 'agent_stopped_speaking' }),
    });
    this.input = setup.userInput
      ? setup.userInput({
          onSpeechStarted: (preRoll) => this.onSpeechStarted(preRoll),
          onSpeech: (pcm) => this.stt?.write(pcm),
          onTurnEnded: (lastVoicedAt) => void this.onTurnEnded(lastVoicedAt),
          onError: (error) => this.warnOnce('vad_failed', `Voice activity detection failed: ${String(error)}`),
        })
      : null;
  }

  get id(): string {
    return this.setup.id;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** Charges the first minute, says hello, shows the initial state, and lets the agent speak first. */
  async start(): Promise<void> {
    this.startedAt = Date.now();
    this.setup.clock.add(this.audioOut);
    const { id, flowId, flow } = this.setup;
    this.send({ type: 'session_started', session_id: id, mode: flow ? 'flow' : 'assistant', flow_id: flowId, sample_rate: ENGINE_SAMPLE_RATE });
    this.hook({ type: 'started', mode: flow ? 'flow' : 'assistant', flowId, transport: this.setup.transport });
    if (this.setup.meter && !(await this.setup.meter.start())) return; // onExhausted ends the session
    if (this.ended) return;
    if (this.runtime) this.sendFlowState();
    if (!this.setup.providers.llm) {
      this.send(sessionError('llm_unavailable'));
      return;
    }
    void this.runAgentTurn(null, new TurnTiming(++this.turnCount, 'greeting'));
  }

  /** PCM16 16 kHz mono from the client. */
  pushAudio(pcm: Int16Array): void {
    if (this.ended) return;
    if (!this.input) {
      this.warnOnce('vad_unavailable');
      return;
    }
    this.input.push(pcm);
  }

  /** A text frame from the client. */
  handleTextFrame(text: string): void {
    if (this.ended) return;
    const parsed = parseClientMessage(text);
    if (!parsed.ok) {
      this.send(sessionError(parsed.code, parsed.message));
      return;
    }
    this.handleMessage(parsed.message);
  }

  handleMessage(message: ClientMessage): void {
    switch (message.type) {
      case 'ping':
        this.send({ type: 'pong' });
        return;
      case 'end':
        void this.end('client_ended');
        return;
      case 'interrupt':
        this.interrupt();
        return;
      case 'text':
        this.interrupt();
        this.send({ type: 'transcript', role: 'user', text: message.text, final: true });
        this.history.push({ role: 'user', content: message.text });
        void this.runAgentTurn(message.text, new TurnTiming(++this.turnCount, 'typed'));
        return;
      case 'simulate_tool':
        this.simulateTool(message.name, message.arguments ?? {});
        return;
    }
  }

  /**
   * Ends the session once: stops charging, cancels work in flight, records the end, says
   * session_ended and closes the transport. Safe to call from anywhere, any number of times.
   */
  end(reason: string): Promise<void> {
    this.endPromise ??= this.finish(reason);
    return this.endPromise;
  }

  // ── Turns ────────────────────────────────────────────────────────────────────────────────

  private onSpeechStarted(preRoll: Int16Array): void {
    if (this.ended) return;
    this.userSpeaking = true;
    this.send({ type: 'user_started_speaking' });
    // Barge-in: the user talking over the agent (or over its thinking) stops it at once.
    if (this.turn || this.audioOut.isBusy) this.interrupt();
    if (this.setup.providers.stt) {
      this.stt ??= this.setup.providers.stt.open({ language: this.setup.language });
      this.stt.write(preRoll);
    }
  }

  private async onTurnEnded(lastVoicedAt: number): Promise<void> {
    if (this.ended || !this.userSpeaking) return;
    this.userSpeaking = false;
    const timing = new TurnTiming(++this.turnCount, 'voice');
    timing.userTurnEnded(lastVoicedAt);
    this.send({ type: 'user_stopped_speaking' });
    if (!this.stt) {
      this.send(sessionError('stt_unavailable'));
      return;
    }
    let text: string;
    try {
      const timeout = AbortSignal.timeout(this.setup.sttFlushTimeoutMs ?? 8_000);
      text = (await this.stt.flush(AbortSignal.any([this.lifetime.signal, timeout]))).trim();
    } catch (error) {
      if (this.ended) return;
      this.providerFailed('stt_failed', error);
      return;
    }
    timing.transcribed();
    if (this.ended || !text || this.userSpeaking) {
      // Nothing recognised (a cough, noise), or the user went on talking: that next turn answers.
      if (text && !this.ended) this.history.push({ role: 'user', content: text });
      return;
    }
    this.send({ type: 'transcript', role: 'user', text, final: true });
    this.history.push({ role: 'user', content: text });
    await this.runAgentTurn(text, timing);
  }

  /** Runs the model (and the flow's tool rounds) until it answers in words, speaking as it goes. */
  private async runAgentTurn(userText: string | null, timing: TurnTiming): Promise<void> {
    const llm = this.setup.providers.llm;
    if (this.ended) return;
    if (!llm) {
      if (userText !== null) this.warnOnce('llm_unavailable');
      return;
    }
    const turn: Turn = { controller: new AbortController(), timing, assistantMessages: [] };
    this.turn = turn;
    const signal = turn.controller.signal;
    const speech = new SpeechQueue(this.setup.providers.tts, this.audioOut, signal, timing, (error) => this.providerFailed('tts_failed', error, false));
    this.audioOut.beginReply();
    this.runtime?.beginUserTurn();
    try {
      for (;;) {
        this.runtime?.beginModelResponse();
        const tools = this.runtime?.toolSchemas() ?? [];
        const system = this.runtime ? this.runtime.systemPrompt() : this.setup.assistantPrompt;
        const messageIndex = this.history.length;
        const splitter = new SentenceSplitter();
        const calls: ChatToolCall[] = [];
        let text = '';
        timing.modelRequested();
        for await (const chunk of llm.stream({ messages: [{ role: 'system', content: system }, ...this.history], tools, signal })) {
          timing.modelAnswered();
          if (chunk.type === 'text') {
            text += chunk.text;
            for (const sentence of splitter.push(chunk.text)) speech.say(sentence, messageIndex);
          } else if (chunk.type === 'tool_call') {
            calls.push(chunk.call);
          }
        }
        signal.throwIfAborted();
        for (const sentence of splitter.flush()) speech.say(sentence, messageIndex);
        // The model's message and every call's outcome enter the history in one synchronous
        // step with the runtime's state change: nothing can interrupt in between.
        this.history.push({ role: 'assistant', content: text || null, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
        turn.assistantMessages.push(messageIndex);
        if (text.trim()) this.send({ type: 'transcript', role: 'agent', text: text.trim(), final: true });
        if (calls.length === 0) break;
        const outcomes = calls.map((call) => this.applyToolCall(call, 'model', speech));
        // Past the round cap the model was offered no tools; if it called some anyway, stop
        // here instead of asking it again.
        if (outcomes.every((o) => o.status === 'rejected' && o.code === 'round_limit')) break;
      }
      await speech.finished();
    } catch (error) {
      if (signal.aborted || isAbortError(error)) return;
      this.providerFailed('llm_failed', error);
    } finally {
      if (this.turn === turn) {
        // A turn that spoke already reported at its first audio frame; one that did not reports now.
        this.sendMetrics(timing);
        this.turn = null;
        this.audioOut.endReply();
      }
    }
  }

  private applyToolCall(call: ChatToolCall, source: ToolCallSource, speech: SpeechQueue | null): ToolCallOutcome {
    const runtime = this.runtime;
    let outcome: ToolCallOutcome;
    if (runtime) {
      outcome = runtime.applyToolCall(call.function.name, call.function.arguments);
    } else {
      const reason = 'this is an assistant session: there are no flow tools';
      outcome = { status: 'rejected', name: call.function.name, arguments: call.function.arguments, fromState: '', toState: '', code: 'unlisted_tool', reason, result: { ok: false, error: reason } };
    }
    this.history.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(outcome.result) });
    this.send({
      type: 'tool_call',
      name: outcome.name,
      arguments: outcome.arguments,
      status: outcome.status,
      reason: outcome.status === 'rejected' ? outcome.reason : null,
      from_state: outcome.fromState,
      to_state: outcome.toState,
      source,
    });
    this.hook({ type: 'tool_called', name: outcome.name, status: outcome.status, source, state: outcome.fromState });
    if (outcome.status === 'accepted') {
      if (outcome.speechCue && speech) {
        // The user hears the cue, so the transcript shows it; the model already gets it in the tool result.
        speech.say(outcome.speechCue, null);
        this.send({ type: 'transcript', role: 'agent', text: outcome.speechCue, final: true });
      }
      if (outcome.moved) {
        this.sendFlowState();
        this.hook({ type: 'state_changed', from: outcome.fromState, to: outcome.toState, tool: outcome.name });
      } else if (runtime) {
        // A stay still changes variables, which the UI card may show.
        this.sendFlowState();
      }
    }
    return outcome;
  }

  private simulateTool(name: string, args: Record<string, unknown>): void {
    if (!this.setup.allowSimulator) {
      this.send(sessionError('forbidden'));
      return;
    }
    if (!this.runtime) {
      this.send(sessionError('no_flow'));
      return;
    }
    this.interrupt();
    this.runtime.beginUserTurn();
    this.runtime.beginModelResponse();
    // Recorded as if the model had made the call, so a model that runs later knows the state.
    const call: ChatToolCall = { id: `sim_${++this.simulatedCalls}`, type: 'function', function: { name, arguments: JSON.stringify(args) } };
    this.history.push({ role: 'assistant', content: null, tool_calls: [call] });
    const timing = new TurnTiming(++this.turnCount, 'simulated');
    const speech = new SpeechQueue(this.setup.providers.tts, this.audioOut, this.lifetime.signal, timing, (error) => this.providerFailed('tts_failed', error, false));
    this.audioOut.beginReply();
    this.applyToolCall(call, 'simulator', speech);
    void speech.finished().finally(() => this.audioOut.endReply());
  }

  /** Stops the agent now: cancels the model and speech in flight and records what was heard. */
  private interrupt(): void {
    const turn = this.turn;
    const wasSpeaking = this.audioOut.isSpeaking;
    const busy = turn !== null || this.audioOut.isBusy;
    const sentences = this.audioOut.stop();
    this.turn = null;
    turn?.controller.abort();
    if (!busy) return;
    this.send({ type: 'interrupted' });
    if (wasSpeaking) this.send({ type: 'agent_stopped_speaking' });
    const heard = this.rewriteHistoryAsHeard(sentences);
    if (heard) this.send({ type: 'transcript', role: 'agent', text: heard, final: true, interrupted: true });
  }

  /**
   * After a barge-in the model should remember only what the user heard: each of the turn's
   * assistant messages keeps the words that were spoken, marked as cut off. Tool calls stay —
   * they were committed.
   */
  private rewriteHistoryAsHeard(sentences: SpokenSentence[]): string {
    const heardByMessage = new Map<number, string[]>();
    let truncated = false;
    for (const sentence of sentences) {
      if (!sentence.whole) truncated = true;
      if (sentence.tag === null) continue;
      const parts = heardByMessage.get(sentence.tag) ?? [];
      if (sentence.spoken) parts.push(sentence.spoken);
      heardByMessage.set(sentence.tag, parts);
    }
    for (const [index, parts] of heardByMessage) {
      const message = this.history[index];
      if (message?.role !== 'assistant') continue;
      const heard = parts.join(' ');
      message.content = heard ? `${heard}${truncated ? '…' : ''}` : null;
    }
    // A message nobody heard a word of, with no committed tool calls, is forgotten entirely.
    for (let i = this.history.length - 1; i >= 0; i--) {
      const message = this.history[i]!;
      if (message.role === 'assistant' && message.content === null && !message.tool_calls) this.history.splice(i, 1);
    }
    return sentences.map((s) => s.spoken).filter(Boolean).join(' ');
  }

  // ── Output and bookkeeping ──────────────────────────────────────────────────────────────

  private sendFlowState(): void {
    if (!this.runtime) return;
    const snapshot = this.runtime.snapshot();
    this.send({ type: 'flow_state', ...snapshot });
    this.send({ type: 'artifact', state: snapshot.state, artifact_type: snapshot.artifact_type, prompt: snapshot.prompt });
  }

  private sendMetrics(timing: TurnTiming): void {
    if (timing.claimReport()) this.send({ type: 'metrics', ...timing.metrics() });
  }

  private providerFailed(code: 'stt_failed' | 'llm_failed' | 'tts_failed', error: unknown, speakFallback = true): void {
    if (this.ended) return;
    const provider = error instanceof ProviderError ? error.provider : 'provider';
    const message = error instanceof ProviderError ? error.message : `${provider} failed`;
    this.setup.log.warn({ err: error, session: this.id, code }, 'provider failure in session');
    this.send(sessionError(code, message));
    if (!speakFallback) return;
    const speech = new SpeechQueue(this.setup.providers.tts, this.audioOut, this.lifetime.signal, null, () => undefined);
    this.audioOut.beginReply();
    speech.say(FALLBACK_LINE, null);
    void speech.finished().finally(() => {
      if (!this.turn) this.audioOut.endReply();
    });
  }

  private warnOnce(code: SessionErrorCode, message?: string): void {
    if (this.warned.has(code)) return;
    this.warned.add(code);
    this.send(sessionError(code, message));
  }

  /** A frame the transport could not take (e.g. odd-length audio): the client is told, the session goes on. */
  rejectFrame(code: 'malformed_audio', message?: string): void {
    if (!this.ended) this.send(sessionError(code, message));
  }

  private send(event: ServerEvent): void {
    if (this.ended && event.type !== 'session_ended') return;
    try {
      this.output.sendEvent(event);
    } catch (error) {
      this.setup.log.warn({ err: error, session: this.id }, 'could not send an event');
    }
  }

  private hook(event: Parameters<SessionHooks['emit']>[0]): void {
    this.setup.hooks.emit(event, { sessionId: this.id, accountId: this.setup.accountId, metadata: this.setup.metadata });
  }

  private async finish(reason: string): Promise<void> {
    const charged = () => this.setup.meter?.chargedCents ?? 0;
    const meterStopped = this.setup.meter?.stop();
    this.interrupt();
    this.ended = true;
    this.lifetime.abort();
    this.setup.clock.remove(this.audioOut);
    this.input?.close();
    this.stt?.close();
    const durationSecs = this.startedAt ? Math.round((Date.now() - this.startedAt) / 1000) : 0;
    await meterStopped;
    try {
      await this.setup.recordEnd({ reason, creditsChargedCents: charged() });
    } catch (error) {
      this.setup.log.error({ err: error, session: this.id }, 'could not record the end of a session');
    }
    this.send({ type: 'session_ended', reason, duration_secs: durationSecs, credits_charged_usd_cents: charged() });
    this.hook({ type: 'ended', reason, durationSecs, creditsChargedCents: charged() });
    this.output.close(1000, reason);
  }
}

/**
 * How much synthesized speech may wait ahead of what is playing before the next sentence is
 * synthesized. Enough to hide a hosted TTS's first-byte time (typically 0.2–1 s); more would be
 * synthesis a barge-in throws away.
 */
const SPEECH_LOOKAHEAD_MS = 2_500;

/**
 * Sentences to speech, in order, one synthesis at a time (the next sentence is synthesized
 * while the previous one plays, once less than SPEECH_LOOKAHEAD_MS is left to play). A failed
 * sentence is reported and skipped.
 */
class SpeechQueue {
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly tts: TextToSpeech,
    private readonly audioOut: AudioOut,
    private readonly signal: AbortSignal,
    private readonly timing: TurnTiming | null,
    private readonly onError: (error: unknown) => void,
  ) {}

  say(text: string, tag: number | null): void {
    const spoken = text.trim();
    if (!spoken) return;
    // The sentence joins the output queue now, before it is synthesized, so a barge-in reports
    // it as unheard instead of leaving it in the model's memory as if it had been spoken.
    const segment = this.audioOut.beginSegment(spoken, tag);
    this.tail = this.tail.then(() => this.synthesize(segment));
  }

  finished(): Promise<void> {
    return this.tail;
  }

  private async synthesize(segment: SegmentWriter): Promise<void> {
    if (this.signal.aborted) return;
    await this.audioOut.whenBufferedBelow(SPEECH_LOOKAHEAD_MS);
    if (this.signal.aborted) return;
    this.timing?.speechRequested();
    try {
      for await (const pcm of this.tts.synthesize(segment.text, this.signal)) {
        if (this.signal.aborted) return;
        this.timing?.speechAnswered();
        segment.append(pcm);
      }
    } catch (error) {
      if (this.signal.aborted || isAbortError(error)) return;
      this.onError(error);
    } finally {
      segment.complete();
    }
  }
}
