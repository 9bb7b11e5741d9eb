// One voice session: its lifecycle and the control path. Audio and control messages come in;
// events and paced agent audio go out.
//
//   audio in ─► VAD/turns (user-input) ─► STT ─► AgentTurn (LLM + flow runtime) ─► SpeechQueue ─► AudioOut
//
// The stages live in their own files: the caller's spoken turns (spoken-turns.ts), the agent
// turn (agent-turn.ts), the speech queue (speech-queue.ts), barge-in and the history rewritten
// to what was heard (barge-in.ts, conversation-history.ts), the flow's speech rules
// (flow-speech-rules.ts), the limits that end a session (session-limits.ts) and the studio's
// simulated tool calls (simulated-tool-call.ts); what the host gives is in session-setup.ts.
// This one is the lifecycle: it starts and ends the session, routes the client's messages, and
// owns what several stages share: the current turn, the conversation history and the audio
// queue. Control (interrupt, end, barge-in) does not queue behind data: it aborts the turn in
// flight at once and clears the audio queue, and the history keeps only what was heard. What
// the flow runtime committed stays committed (see commitToolCall in agent-turn.ts).
import { FlowRuntime } from '../flow/runtime.ts';
import { parseClientMessage, type ClientMessage } from '../protocol/client-messages.ts';
import type { ServerEvent } from '../protocol/events.ts';
import { sessionError, type SessionErrorCode } from '../protocol/session-errors.ts';
import { ENGINE_SAMPLE_RATE, ProviderError, type ChatToolCall } from '../providers/types.ts';
import { AgentTurn, flowStateEvents, type CommitTarget } from './agent-turn.ts';
import { AudioOut } from './audio-out.ts';
import { interruptAgent } from './barge-in.ts';
import { ConversationHistory } from './conversation-history.ts';
import type { HookEvent } from './hooks.ts';
import { FlowSpeechRules } from './flow-speech-rules.ts';
import { runHttpTool } from './http-tools.ts';
import type { SessionOutput, SessionSetup } from './session-setup.ts';
import { SessionLimits } from './session-limits.ts';
import { applySimulatedToolCall } from './simulated-tool-call.ts';
import { SpeechQueue } from './speech-queue.ts';
import { SpokenTurns } from './spoken-turns.ts';
import { TokenBucket } from './token-bucket.ts';
import { TurnTiming } from './turn-timing.ts';
import type { UserTurnInput } from './user-input.ts';

export type { SessionEndRecord, SessionLogger, SessionOutput, SessionSetup } from './session-setup.ts';

/**
 * Typed turns and simulate_tool each start model or speech requests that the account pays for:
 * a client may send 5 at once, then 1 a second (a token bucket shared by both). One that
 * comes faster is dropped with a `rate_limited` error and starts nothing.
 */
export const DRIVEN_TURNS_BURST = 5;
export const DRIVEN_TURNS_PER_SECOND = 1;

export const FALLBACK_LINE = "Sorry, I'm having trouble right now. Could you say that again?";

export class VoiceSession {
  readonly runtime: FlowRuntime | null;
  private readonly history = new ConversationHistory();
  /** What committing a tool call needs of the session (the model's calls and the simulator's alike). */
  private readonly commitTarget: CommitTarget;
  private readonly audioOut: AudioOut;
  private readonly input: UserTurnInput | null;
  /** The caller's spoken turns, from the VAD's boundaries through the speech recognizer. */
  private readonly spoken: SpokenTurns;
  /** The agent turn in flight; a barge-in, a typed turn or the end cancels it. */
  private turn: AgentTurn | null = null;
  private turnCount = 0;
  private startedAt = 0;
  private ended = false;
  private endPromise: Promise<void> | null = null;
  private warned = new Set<SessionErrorCode>();
  private simulatedCalls = 0;
  private readonly lifetime = new AbortController();
  private readonly drivenTurns = new TokenBucket({ burst: DRIVEN_TURNS_BURST, perSecond: DRIVEN_TURNS_PER_SECOND });
  private readonly limits: SessionLimits;
  /** What the flow's states and settings ask of the speech (docs/flows.md), in flow-speech-rules.ts. */
  private readonly flowSpeech: FlowSpeechRules;

  constructor(
    private readonly setup: SessionSetup,
    private readonly output: SessionOutput,
  ) {
    this.runtime = setup.flow ? new FlowRuntime(setup.flow, { context: setup.context }) : null;
    this.limits = new SessionLimits(setup, () => this.ended, (reason) => void this.end(reason));
    this.commitTarget = {
      runtime: this.runtime,
      history: this.history,
      send: (event) => this.send(event),
      hook: (event) => this.hook(event),
      callHttpTool: (request) =>
        runHttpTool(this.setup.sendToolRequest ?? null, request, {
          accountId: this.setup.accountId,
          sessionId: this.setup.id,
          metadata: this.setup.metadata,
          signal: this.lifetime.signal,
        }),
      entered: (entry, speech) => {
        this.flowSpeech.entered(entry, speech);
        this.input?.setEndpointingMs?.(this.runtime?.stateOptions().endpointingMs ?? null);
      },
    };
    this.audioOut = new AudioOut({
      sendFrame: (frame) => {
        this.output.sendAudio(frame);
        const timing = this.turn?.timing;
        if (timing?.markFirstAudioOut()) this.sendMetrics(timing);
      },
      onStarted: () => this.send({ type: 'agent_started_speaking' }),
      onFinished: () => {
        this.send({ type: 'agent_stopped_speaking' });
        this.flowSpeech.afterAgentSpoke();
      },
    }, setup.audioNow);
    this.flowSpeech = new FlowSpeechRules(
      {
        audioOut: this.audioOut,
        history: this.history,
        send: (event) => this.send(event),
        lineSpeech: () => new SpeechQueue(this.setup.providers.tts, this.audioOut, this.lifetime.signal, null, (error) => this.providerFailed('tts_failed', error, false)),
        turnInFlight: () => this.turn !== null,
        isEnded: () => this.ended,
        end: (reason) => void this.end(reason),
        lastActivityAt: () => this.limits.lastActivityAt,
      },
      this.runtime,
    );
    const sttModel = setup.flow?.settings?.stt?.model;
    this.spoken = new SpokenTurns({
      stt: setup.providers.stt,
      sttOptions: { language: setup.language, ...(sttModel ? { model: sttModel } : {}) },
      sttFlushTimeoutMs: setup.sttFlushTimeoutMs ?? 8_000,
      signal: this.lifetime.signal,
      history: this.history,
      flowSpeech: this.flowSpeech,
      isEnded: () => this.ended,
      noteActivity: () => this.noteActivity(),
      agentBusy: () => this.turn !== null || this.audioOut.isBusy,
      interrupt: () => this.interrupt(),
      send: (event) => this.send(event),
      sttFailed: (error) => this.providerFailed('stt_failed', error),
      nextTurnNumber: () => ++this.turnCount,
      answer: (text, timing) => this.runAgentTurn(text, timing),
    });
    this.input = setup.userInput
      ? setup.userInput({
          onSpeechStarted: (preRoll) => this.spoken.onSpeechStarted(preRoll),
          onSpeech: (pcm) => this.spoken.onSpeech(pcm),
          onTurnEnded: (lastVoicedAt) => this.spoken.onTurnEnded(lastVoicedAt),
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

  /** No agent turn in flight and nothing of a reply left to say: the session waits for the user. */
  get isIdle(): boolean {
    return this.turn === null && !this.audioOut.isBusy;
  }

  /** Charges the first minute, says hello, shows the initial state, and lets the agent speak first. */
  async start(): Promise<void> {
    this.startedAt = Date.now();
    this.noteActivity();
    this.limits.watch();
    this.flowSpeech.watchIdle();
    this.setup.clock.add(this.audioOut);
    const { id, flowId, flow } = this.setup;
    this.send({ type: 'session_started', session_id: id, mode: flow ? 'flow' : 'assistant', flow_id: flowId, sample_rate: ENGINE_SAMPLE_RATE });
    this.hook({ type: 'started', mode: flow ? 'flow' : 'assistant', flowId, transport: this.setup.transport });
    if (this.setup.meter && !(await this.setup.meter.start())) return; // onExhausted ends the session
    if (this.ended) return;
    for (const event of flowStateEvents(this.runtime)) this.send(event);
    const entry = this.runtime?.initialEntry;
    if (entry) {
      this.input?.setEndpointingMs?.(this.runtime?.stateOptions().endpointingMs ?? null);
      this.flowSpeech.enterInitialState(entry);
    }
    if (entry && !entry.respond) return;
    if (!this.setup.providers.llm) {
      this.send(sessionError('llm_unavailable'));
      return;
    }
    void this.runAgentTurn(null, new TurnTiming(++this.turnCount, 'greeting'));
  }

  /** PCM16 16 kHz mono from the client. */
  pushAudio(pcm: Int16Array): void {
    if (this.ended) return;
    this.setup.callerAudioTap?.(pcm);
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
        this.interrupt();
        return;
      case 'text':
        if (!this.setup.unlimitedDrivenTurns && !this.drivenTurns.take()) {
          this.send(sessionError('rate_limited'));
          return;
        }
        this.interrupt();
        this.send({ type: 'transcript', role: 'user', text: message.text, final: true });
        this.history.addUser(message.text);
        void this.runAgentTurn(message.text, new TurnTiming(++this.turnCount, 'typed'));
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

  /**
   * The session is idle when, for `idleEndMs`, the caller has not spoken and the client has
   * sent no message. Speaking means what the VAD hears as speech: a live call sends audio
   * frames all the time, silence included, and those alone are no sign that anyone is there.
   * Any text frame counts, a malformed or refused one too, except `ping` (a keep-alive sent by
   * code, not by a person). What the agent says does not count: it speaks only in answer to a
   * turn, a greeting aside.
   */
  private noteActivity(): void {
    this.limits.noteActivity();
    this.flowSpeech.noteActivity();
  }

  // ── Turns ────────────────────────────────────────────────────────────────────────────────

  /** Runs one agent turn as the session's current one, until it ends or is interrupted. */
  private async runAgentTurn(userText: string | null, timing: TurnTiming): Promise<void> {
    const llm = this.setup.providers.llm;
    if (this.ended) return;
    if (!llm) {
      if (userText !== null) this.warnOnce('llm_unavailable');
      return;
    }
    const turn = new AgentTurn(
      {
        llm,
        tts: this.setup.providers.tts,
        audioOut: this.audioOut,
        assistantPrompt: this.setup.assistantPrompt,
        speechFailed: (error) => this.providerFailed('tts_failed', error, false),
        ...this.commitTarget,
      },
      timing,
    );
    this.turn = turn;
    this.audioOut.beginReply();
    try {
      await turn.run();
    } catch (error) {
      this.providerFailed('llm_failed', error);
    } finally {
      if (this.turn === turn) {
        // A turn that spoke already reported at its first audio frame; one that did not reports now.
        this.sendMetrics(timing);
        this.turn = null;
        this.audioOut.endReply();
        this.flowSpeech.afterAgentSpoke();
      }
    }
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
    // Recorded as if the model had made the call, so a model that runs later knows the state.
    const call: ChatToolCall = { id: `sim_${++this.simulatedCalls}`, type: 'function', function: { name, arguments: JSON.stringify(args) } };
    const timing = new TurnTiming(++this.turnCount, 'simulated');
    const speech = new SpeechQueue(this.setup.providers.tts, this.audioOut, this.lifetime.signal, timing, (error) => this.providerFailed('tts_failed', error, false));
    this.audioOut.beginReply();
    void applySimulatedToolCall(this.commitTarget, this.runtime, call, speech).finally(() => {
      this.audioOut.endReply();
      this.flowSpeech.afterAgentSpoke();
    });
  }

  /** Stops the agent now: cancels the model and speech in flight and records what was heard. */
  private interrupt(): void {
    const turn = this.turn;
    this.turn = null;
    const target = { audioOut: this.audioOut, history: this.history, send: (event: ServerEvent) => this.send(event), sendMetrics: (timing: TurnTiming) => this.sendMetrics(timing) };
    interruptAgent(target, turn);
  }

  // ── Output and bookkeeping ──────────────────────────────────────────────────────────────

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

  private hook(event: HookEvent): void {
    this.setup.hooks.emit(event, { sessionId: this.id, accountId: this.setup.accountId, metadata: this.setup.metadata });
  }

  private async finish(reason: string): Promise<void> {
    this.setup.onEnding?.();
    this.limits.stop();
    this.flowSpeech.stop();
    const charged = () => this.setup.meter?.chargedCents ?? 0;
    const meterStopped = this.setup.meter?.stop();
    this.interrupt();
    this.ended = true;
    this.lifetime.abort();
    this.setup.clock.remove(this.audioOut);
    this.input?.close();
    this.spoken.close();
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
