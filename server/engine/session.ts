// One voice session: its lifecycle and the client's messages. The transport hands it audio and
// text frames; it gives back events and paced agent audio through SessionOutput. The stages that
// hear the caller and speak for the agent are assembled in session-pipeline.ts; this file starts
// and ends the session, turns the client's messages into frames for the pipeline, and meters
// what a client may drive (typed turns, simulated tool calls).
import { FlowRuntime } from '../flow/runtime.ts';
import { parseClientMessage, type ClientMessage } from '../protocol/client-messages.ts';
import type { ServerEvent } from '../protocol/events.ts';
import { sessionError } from '../protocol/session-errors.ts';
import { ENGINE_SAMPLE_RATE } from '../providers/types.ts';
import { flowStateEvents } from './agent-turn.ts';
import type { HookEvent } from './hooks.ts';
import type { SessionOutput, SessionSetup } from './session-setup.ts';
import { SessionPipeline } from './session-pipeline.ts';
import { TokenBucket } from './token-bucket.ts';

export type { SessionEndRecord, SessionLogger, SessionOutput, SessionSetup, WarmTransferHelp } from './session-setup.ts';
// What a transport's transfer is asked to do, for the transports, which do not read the flow model.
export type { TransferAction } from '../flow/runtime.ts';
export { FALLBACK_LINE } from './agent-replies.ts';

/**
 * Typed turns and simulate_tool each start model or speech requests that the account pays for:
 * a client may send 5 at once, then 1 a second (a token bucket shared by both). One that
 * comes faster is dropped with a `rate_limited` error and starts nothing.
 */
export const DRIVEN_TURNS_BURST = 5;
export const DRIVEN_TURNS_PER_SECOND = 1;

export class VoiceSession {
  readonly runtime: FlowRuntime | null;
  private readonly pipeline: SessionPipeline;
  private startedAt = 0;
  private ended = false;
  private endPromise: Promise<void> | null = null;
  private readonly lifetime = new AbortController();
  private readonly drivenTurns = new TokenBucket({ burst: DRIVEN_TURNS_BURST, perSecond: DRIVEN_TURNS_PER_SECOND });

  constructor(
    private readonly setup: SessionSetup,
    private readonly output: SessionOutput,
  ) {
    this.runtime = setup.flow ? new FlowRuntime(setup.flow, { context: setup.context }) : null;
    this.pipeline = new SessionPipeline(setup, this.runtime, {
      signal: this.lifetime.signal,
      send: (event) => this.send(event),
      sendAudio: (frame) => this.output.sendAudio(frame),
      hook: (event) => this.hook(event),
      end: (reason) => void this.end(reason),
      ...(output.transfer ? { transfer: (action, warm) => output.transfer!(action, warm) } : {}),
      ...(output.sendDigits ? { sendDigits: (digits) => output.sendDigits!(digits) } : {}),
    });
  }

  get id(): string {
    return this.setup.id;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** No agent turn in flight and nothing of a reply left to say: the session waits for the user. */
  get isIdle(): boolean {
    return this.pipeline.isIdle;
  }

  /** Charges the first minute, says hello, shows the initial state, and lets the agent speak first. */
  async start(): Promise<void> {
    this.startedAt = Date.now();
    this.pipeline.start();
    const { id, flowId, flow } = this.setup;
    this.send({ type: 'session_started', session_id: id, mode: flow ? 'flow' : 'assistant', flow_id: flowId, sample_rate: ENGINE_SAMPLE_RATE });
    this.hook({ type: 'started', mode: flow ? 'flow' : 'assistant', flowId, transport: this.setup.transport });
    if (this.setup.meter && !(await this.setup.meter.start())) return; // onExhausted ends the session
    if (this.ended) return;
    if (this.setup.leaveVoicemail) {
      this.pipeline.leaveVoicemail(this.runtime?.voicemail()?.message ?? null);
      return;
    }
    for (const event of flowStateEvents(this.runtime)) this.send(event);
    const entry = this.runtime?.initialEntry;
    if (entry) this.pipeline.enterInitialState(entry);
    if (entry && !entry.respond) return;
    if (!this.setup.providers.llm) {
      this.send(sessionError('llm_unavailable'));
      return;
    }
    this.pipeline.greet();
  }

  /** PCM16 16 kHz mono from the client. */
  pushAudio(input: Int16Array): void {
    // An answering machine records the message: nothing it sends is a caller's turn.
    if (this.ended || this.setup.leaveVoicemail) return;
    const line = this.setup.callerAudioLine;
    const pcm = line ? line(input) : input;
    // The line's filters hold back their first few milliseconds.
    if (line && pcm.length === 0) return;
    this.setup.callerAudioTap?.(pcm);
    this.pipeline.push({ type: 'caller_audio', pcm });
  }

  /**
   * A phone call's carrier says an answering machine took the call, after the flow began (its
   * detector listens while the call runs): the flow's voicemail message is left once the
   * machine's greeting is over, and the session ends with `voicemail`.
   */
  machineAnswered(): void {
    if (this.ended || this.setup.leaveVoicemail) return;
    this.pipeline.machineAnswered(this.runtime?.voicemail()?.message ?? null);
  }

  /** Keys the caller pressed (a phone's DTMF): committed on the flow as its keypad says. */
  pushDigits(digits: string): void {
    if (this.ended || this.setup.leaveVoicemail || digits.length === 0) return;
    this.pipeline.push({ type: 'dtmf', digits });
  }

  /** A text frame from the client. */
  handleTextFrame(text: string): void {
    if (this.ended) return;
    const parsed = parseClientMessage(text);
    // A ping is a client's keep-alive, sent by code whether anyone is there or not.
    if (!parsed.ok || parsed.message.type !== 'ping') this.noteActivity();
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
        this.pipeline.push({ type: 'interrupt' });
        return;
      case 'text':
        if (!this.setup.unlimitedDrivenTurns && !this.drivenTurns.take()) {
          this.send(sessionError('rate_limited'));
          return;
        }
        this.pipeline.push({ type: 'typed_turn', text: message.text });
        return;
      case 'dtmf':
        // A client's keys may start a model turn, as a typed turn does: the same budget.
        if (!this.setup.unlimitedDrivenTurns && !this.drivenTurns.take()) {
          this.send(sessionError('rate_limited'));
          return;
        }
        this.pushDigits(message.digits);
        return;
      case 'simulate_tool':
        if (!this.setup.unlimitedDrivenTurns && !this.drivenTurns.take()) {
          this.send(sessionError('rate_limited'));
          return;
        }
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

  /** A frame the transport could not take (e.g. odd-length audio): the client is told, the session goes on. */
  rejectFrame(code: 'malformed_audio', message?: string): void {
    if (!this.ended) this.send(sessionError(code, message));
  }

  /**
   * The session is idle when, for `idleEndMs`, the caller has not spoken and the client has
   * sent no message. Speaking means what the VAD hears as speech: a live call sends audio
   * frames all the time, silence included, and those alone are no sign that anyone is there.
   * Any text frame counts, a malformed or refused one too, except `ping` (a keep-alive sent by
   * code, not by a person). What the agent says does not count: it speaks only in answer to a
   * turn, a greeting aside.
   */
  private noteActivity(): void {
    this.pipeline.noteActivity();
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
    this.pipeline.simulateToolCall(this.runtime, name, args);
  }

  private send(event: ServerEvent): void {
    if (this.ended && event.type !== 'session_ended') return;
    try {
      this.output.sendEvent(event);
    } catch (error) {
      this.setup.log.warn({ err: error, session: this.id }, 'could not send an event');
    }
  }

  private hook(event: HookEvent): void {
    this.setup.hooks.emit(event, { sessionId: this.id, accountId: this.setup.accountId, metadata: this.setup.metadata });
  }

  private async finish(reason: string): Promise<void> {
    this.setup.onEnding?.();
    this.pipeline.stopTimers();
    const charged = () => this.setup.meter?.chargedCents ?? 0;
    const meterStopped = this.setup.meter?.stop();
    this.pipeline.push({ type: 'interrupt' });
    this.ended = true;
    this.lifetime.abort();
    this.pipeline.close();
    // The end is read off the clock once: the event, the hook and the record all say this value.
    const endedAt = Date.now();
    const durationSecs = this.startedAt ? Math.round((endedAt - this.startedAt) / 1000) : 0;
    await meterStopped;
    try {
      await this.setup.recordEnd({ reason, creditsChargedCents: charged(), endedAt: endedAt / 1000, durationSecs });
    } catch (error) {
      this.setup.log.error({ err: error, session: this.id }, 'could not record the end of a session');
    }
    this.send({ type: 'session_ended', reason, duration_secs: durationSecs, credits_charged_usd_cents: charged() });
    this.hook({ type: 'ended', reason, durationSecs, creditsChargedCents: charged() });
    this.output.close(1000, reason);
  }
}
