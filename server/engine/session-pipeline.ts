// The voice pipeline of one session, assembled in this one place. Each stage takes frames
// (frames.ts) and gives frames and client events through its own output, and knows nothing of
// the stages around it; the wires below say where each output goes. It is one file over 400
// lines on purpose: the wiring of every stage, with the hold and voicemail modes that change it,
// is the one place a new stage is added, and split it would no longer be read at once.
//
//   caller audio ─► VadStage ─► CallerSpeechGate ─► SpokenTurns ─► AgentReplies ─► SpeechQueue ─► AudioOut ─► transport
//                   VAD, end      interruptible:      STT             LLM + flow      TTS, one        paced 20 ms
//                   of turn       false lines                         runtime         sentence ahead  frames
//
// Control frames (interrupt, end, error, warning, agent_quiet) are acted on in control() the
// moment a stage pushes one, ahead of any data in flight: an interrupt cancels the agent's turn
// and drops its queued speech, and the history keeps only what the caller heard.
//
// Adding a stage touches this file (and frames.ts for a new kind of frame), no other stage:
// - A backchannel filter ("mm-hm" is no barge-in) takes and gives CallerSpeechFrames: build it
//   here and wire the VAD's output to it, and its output to the gate.
// - A phone keypad: VoiceSession.pushDigits(digits) (from a phone transport, or a `{type:"dtmf"}`
//   client message) pushes a `dtmf` frame into push() below; a keypad stage turns the digits into
//   a caller_turn for AgentReplies or into a tool call on the flow runtime, the way
//   AgentReplies.simulateToolCall applies one.
// - Call control (hang up, transfer, send DTMF): optional members of SessionOutput
//   (session-setup.ts) that a phone transport implements; a stage pushes a control frame for each,
//   and control() calls the transport's member.
import type { FlowRuntime, StateEntry } from '../flow/runtime.ts';
import type { ServerEvent } from '../protocol/events.ts';
import { sessionError, type SessionErrorCode } from '../protocol/session-errors.ts';
import { ENGINE_SAMPLE_RATE, ProviderError } from '../providers/types.ts';
import { AgentReplies } from './agent-replies.ts';
import { AudioOut } from './audio-out.ts';
import { interruptAgent, type BargeInTarget } from './barge-in.ts';
import { CallerSpeechGate } from './caller-speech-gate.ts';
import { ConversationHistory } from './conversation-history.ts';
import { FlowSpeechRules } from './flow-speech-rules.ts';
import { GREETING_END_SILENCE_MS, GreetingEnd } from './greeting-end.ts';
import type { CallerAudioFrame, ControlFrame, ErrorFrame, InterruptFrame, KeypadFrame, TypedTurnFrame } from './frames.ts';
import { KeypadStage } from './keypad-stage.ts';
import { flowStateEvents } from './agent-turn.ts';
import type { TransferAction } from '../flow/runtime.ts';
import type { HookEvent } from './hooks.ts';
import { runHttpTool } from './http-tools.ts';
import { transferSummary } from './transfer-summary.ts';
import type { SessionOutput, SessionSetup } from './session-setup.ts';
import { SessionLimits } from './session-limits.ts';
import { SpokenTurns } from './spoken-turns.ts';
import { metricsReport, TurnTiming } from './turn-timing.ts';
import { DEFAULT_TURN_POLICY, NO_HINTS, shortestWaitMs, type TurnHints, type TurnPolicy } from './turn-rules.ts';
import { VadStage } from './vad-stage.ts';

/** What the session gives its pipeline: its lifetime, the transport's two directions, its hooks, its end. */
export interface PipelineHost {
  /** Aborted when the session ends. */
  readonly signal: AbortSignal;
  send(event: ServerEvent): void;
  sendAudio(frame: Int16Array): void;
  hook(event: HookEvent): void;
  end(reason: string): void;
  /** Call control of a phone call's transport (absent for browsers and apps). */
  transfer?: SessionOutput['transfer'];
  sendDigits?: SessionOutput['sendDigits'];
}

/** Said while a warm transfer rings the person; then the caller hears nothing until it is answered or not. */
export const HOLD_LINE = 'Please hold while I connect you.';

/** What enters the pipeline from outside: the caller's audio and keys, a typed turn, the client's interrupt. */
export type PipelineInput = CallerAudioFrame | TypedTurnFrame | InterruptFrame | KeypadFrame;

export class SessionPipeline {
  readonly history = new ConversationHistory();
  readonly limits: SessionLimits;
  private readonly audioOut: AudioOut;
  private readonly flowSpeech: FlowSpeechRules;
  private readonly vad: VadStage | null;
  private readonly gate: CallerSpeechGate;
  private readonly spoken: SpokenTurns;
  private readonly agent: AgentReplies;
  private readonly keypad: KeypadStage;
  private readonly bargeIn: BargeInTarget;
  private readonly warned = new Set<SessionErrorCode>();
  private turnCount = 0;
  /** The voicemail message is being left: the session ends once it has played. */
  #endAfterVoicemail = false;
  /**
   * A machine answered after the flow began (machineAnswered): the flow, the model and the keys
   * stop for good, and the machine's greeting is listened to until it is over.
   */
  #machine = false;
  #greeting: GreetingEnd | null = null;
  /** The VAD is in a turn of the caller's (or the machine's). */
  #callerSpeaking = false;
  /**
   * A transfer is being made: the caller is on hold. What they say is remembered but not
   * answered, and their keys move nothing, so the flow does not move on under a person about
   * to pick up.
   */
  private handingOn = false;

  constructor(
    private readonly setup: SessionSetup,
    private readonly runtime: FlowRuntime | null,
    private readonly host: PipelineHost,
  ) {
    const { signal } = host;
    const send = (event: ServerEvent) => host.send(event);
    const nextTurnNumber = () => ++this.turnCount;
    this.limits = new SessionLimits(setup, () => signal.aborted, (reason) => this.control({ type: 'end', reason }));

    this.audioOut = new AudioOut(
      {
        sendFrame: (frame) => {
          host.sendAudio(frame);
          const timing = this.agent.currentTiming;
          if (timing?.markFirstAudioOut()) this.sendMetrics(timing);
        },
        onStarted: () => send({ type: 'agent_started_speaking' }),
        onFinished: () => {
          send({ type: 'agent_stopped_speaking' });
          this.control({ type: 'agent_quiet' });
        },
      },
      setup.audioNow,
    );
    this.bargeIn = { audioOut: this.audioOut, history: this.history, send, sendMetrics: (timing) => this.sendMetrics(timing) };

    this.agent = new AgentReplies(
      {
        llm: setup.providers.llm,
        tts: setup.providers.tts,
        assistantPrompt: setup.assistantPrompt,
        audioOut: this.audioOut,
        signal,
        nextTurnNumber,
        commit: {
          runtime,
          history: this.history,
          send,
          hook: (event) => host.hook(event),
          callHttpTool: (request) =>
            runHttpTool(setup.sendToolRequest ?? null, request, { accountId: setup.accountId, sessionId: setup.id, metadata: setup.metadata, signal }),
          entered: (entry, speech) => {
            this.flowSpeech.entered(entry, speech);
            this.followStateEndpointing();
          },
          sendDigits: (digits) => this.sendDigits(digits),
        },
      },
      { push: (frame) => this.control(frame), send },
    );

    this.flowSpeech = new FlowSpeechRules(
      {
        audioOut: this.audioOut,
        history: this.history,
        send,
        lineSpeech: () => this.agent.openSpeech(signal, null),
        turnInFlight: () => this.agent.turnInFlight,
        // Once a machine answered, the flow's lines, moves and reprompts are over.
        isEnded: () => signal.aborted || this.#machine,
        end: (reason) => this.control({ type: 'end', reason }),
        transfer: (action) => this.control({ type: 'transfer', action }),
        lastActivityAt: () => this.limits.lastActivityAt,
      },
      runtime,
    );

    this.keypad = new KeypadStage(runtime, this.history, (event) => host.hook(event), {
      push: (frame) => (frame.type === 'keypad_answer' ? this.agent.answerKeypad(frame) : this.control(frame)),
      send,
    });

    const sttModel = setup.flow?.settings?.stt?.model;
    this.spoken = new SpokenTurns(
      {
        stt: setup.providers.stt,
        sttOptions: { language: setup.language, ...(sttModel ? { model: sttModel } : {}) },
        sttFlushTimeoutMs: setup.sttFlushTimeoutMs ?? 8_000,
        signal,
        nextTurnNumber,
        turn: () => this.turnTaking(),
        agentSpeaking: () => this.audioOut.isSpeaking && !this.audioOut.isPaused,
        turnModel: setup.turnModel ?? null,
      },
      {
        push: (frame) => {
          if ((frame.type === 'caller_turn' || frame.type === 'caller_words') && this.#machine) return;
          if (frame.type === 'caller_turn' && this.handingOn) this.history.addUser(frame.text);
          else if (frame.type === 'caller_turn' || frame.type === 'caller_words') {
            if (!this.handingOn) this.agent.push(frame);
          } else this.control(frame);
        },
        send,
      },
    );
    this.gate = new CallerSpeechGate(() => this.flowSpeech.guardsCallerSpeech, { push: (frame) => this.spoken.push(frame) });
    this.vad = setup.userInput
      ? new VadStage(setup.userInput, {
          push: (frame) => {
            if (frame.type === 'warning') return this.control(frame);
            if (frame.type === 'speech_started') this.#callerSpeaking = true;
            else if (frame.type === 'turn_ended') this.#callerSpeaking = false;
            // The caller is there, whether the gate lets their speech through or not.
            if (!signal.aborted) this.noteActivity();
            if (this.#machine) {
              // A machine's greeting is listened to for its end, not answered.
              if (frame.type === 'speech_started') this.#greeting?.speechStarted();
              else if (frame.type === 'turn_ended') this.#greeting?.turnEnded();
              return;
            }
            this.gate.push(frame);
          },
        })
      : null;
  }

  /**
   * No agent turn in flight, nothing of a reply left to say, and no caller turn waiting for its
   * end: the session waits for the caller.
   */
  get isIdle(): boolean {
    return !this.agent.turnInFlight && !this.audioOut.isBusy && !this.spoken.holdingTurn;
  }

  /** The session has started: its limits and the flow's idle reprompts run, its audio is paced. */
  start(): void {
    this.noteActivity();
    this.limits.watch();
    this.flowSpeech.watchIdle();
    this.setup.clock.add(this.audioOut);
  }

  /** The flow's initial state, before the agent's first words. */
  enterInitialState(entry: StateEntry): void {
    this.followStateEndpointing();
    this.flowSpeech.enterInitialState(entry);
  }

  greet(): void {
    this.agent.greet();
  }

  /**
   * An answering machine took the call and its greeting is over: the message is said in the
   * flow's voice (the same speech path as any line, so the recording is the agent's voice),
   * shown and remembered as the agent's, and the session ends with `voicemail` once it has
   * been sent down the line. No message: it ends at once.
   */
  leaveVoicemail(message: string | null): void {
    this.flowSpeech.stop();
    if (!message) {
      this.host.end('voicemail');
      return;
    }
    this.#endAfterVoicemail = true;
    const speech = this.agent.openSpeech(this.host.signal, null);
    this.audioOut.beginReply();
    speech.say(message, null);
    this.host.send({ type: 'transcript', role: 'agent', text: message, final: true });
    this.history.addAssistant(message);
    void speech.finished().finally(() => {
      this.audioOut.endReply();
      // Nothing could be synthesized (the voice failed): no audio will finish, so end now.
      if (!this.audioOut.isBusy) this.host.end('voicemail');
    });
  }

  /**
   * An answering machine took the call after the flow began: the carrier's detector said so while
   * the call ran (Plivo), and does not say when the greeting ends. The agent stops mid-word (the
   * carrier drops what it holds), the flow and the model stop for good, and once the machine's
   * greeting is over (greeting-end.ts: its beep, or a second of silence after its speech) the
   * message is left as leaveVoicemail leaves it. No message: the session ends at once.
   */
  machineAnswered(message: string | null): void {
    if (this.#machine || this.#endAfterVoicemail || this.host.signal.aborted) return;
    this.#machine = true;
    this.flowSpeech.stop();
    interruptAgent(this.bargeIn, this.agent.takeTurn());
    if (!message) {
      this.host.end('voicemail');
      return;
    }
    this.vad?.setEndpointingMs(GREETING_END_SILENCE_MS);
    this.#greeting = new GreetingEnd(this.#callerSpeaking, ENGINE_SAMPLE_RATE, () => {
      this.#greeting = null;
      if (!this.host.signal.aborted) this.leaveVoicemail(message);
    });
  }

  push(frame: PipelineInput): void {
    switch (frame.type) {
      case 'caller_audio':
        // Nothing a machine sends once its greeting is over is heard: it is recording us.
        if (this.#endAfterVoicemail) return;
        this.#greeting?.audio(frame.pcm);
        if (this.#endAfterVoicemail) return;
        if (this.vad) this.vad.push(frame);
        else this.control({ type: 'warning', code: 'vad_unavailable' });
        return;
      case 'typed_turn':
        this.control({ type: 'interrupt' });
        this.agent.push({ type: 'caller_turn', text: frame.text, timing: new TurnTiming(++this.turnCount, 'typed') });
        return;
      case 'interrupt':
        this.control(frame);
        return;
      case 'dtmf':
        this.noteActivity();
        if (!this.handingOn && !this.#machine) this.keypad.push(frame);
        return;
    }
  }

  /** The flow's owner applies a tool call from the studio (the session checked they may). */
  simulateToolCall(runtime: FlowRuntime, name: string, args: Record<string, unknown>): void {
    this.control({ type: 'interrupt' });
    this.agent.simulateToolCall(runtime, name, args);
  }

  /** The caller spoke or the client sent a message: the session is not idle, the reprompts start over. */
  noteActivity(): void {
    this.limits.noteActivity();
    this.flowSpeech.noteActivity();
  }

  /** The session begins to end: no limit or reprompt fires any more. */
  stopTimers(): void {
    this.limits.stop();
    this.flowSpeech.stop();
  }

  /** The session has ended (its signal is aborted): audio stops, the VAD and the recognizer close. */
  close(): void {
    this.setup.clock.remove(this.audioOut);
    this.vad?.close();
    this.spoken.close();
    this.keypad.close();
  }

  /** Control frames do not queue behind data: each is acted on as it is pushed. */
  control(frame: ControlFrame): void {
    switch (frame.type) {
      case 'interrupt':
        interruptAgent(this.bargeIn, this.agent.takeTurn());
        return;
      case 'pause_agent':
        this.audioOut.pause();
        return;
      case 'resume_agent':
        this.audioOut.resume(frame.from !== 'where_paused');
        return;
      case 'end':
        this.host.end(frame.reason);
        return;
      case 'agent_quiet':
        if (this.#endAfterVoicemail) {
          if (!this.audioOut.isBusy) this.host.end('voicemail');
          return;
        }
        if (this.#machine) return;
        this.flowSpeech.afterAgentSpoke();
        return;
      case 'error':
        this.providerFailed(frame);
        return;
      case 'transfer':
        void this.transfer(frame.action);
        return;
      case 'warning':
        if (this.warned.has(frame.code)) return;
        this.warned.add(frame.code);
        this.host.send(sessionError(frame.code, frame.message));
        return;
    }
  }

  /**
   * Hands the caller on through the transport. Done: the flow's part of the call is over. Not
   * done (the target did not answer, the carrier refused, a browser session has no line): the
   * caller stays, the model hears why, and the state's `on_failed` takes over, or the call ends
   * when it has none.
   */
  private async transfer(action: TransferAction): Promise<void> {
    const { host } = this;
    host.send({ type: 'transfer', to: action.to, mode: action.mode, status: 'started' });
    let result: { ok: true } | { ok: false; reason: string };
    let holdLine: Promise<void> = Promise.resolve();
    if (!host.transfer) result = { ok: false, reason: 'this session is not a phone call: there is no line to hand on' };
    else {
      this.handingOn = true;
      // The person's phone may ring for half a minute: the caller is on hold, not idle.
      const onHold = setInterval(() => this.noteActivity(), 1_000);
      try {
        if (action.mode === 'warm') {
          holdLine = this.flowSpeech.sayLine(HOLD_LINE);
          result = await host.transfer(action, {
            summary: () => (action.summary ? this.summarize() : Promise.resolve('')),
            speak: (text, signal) => this.setup.providers.tts.synthesize(text, signal, { aheadMs: 0 }),
          });
        } else {
          result = await host.transfer(action);
        }
      } catch (error) {
        result = { ok: false, reason: error instanceof Error ? error.message : String(error) };
      } finally {
        clearInterval(onHold);
        this.handingOn = false;
      }
      this.noteActivity();
    }
    if (host.signal.aborted) return;
    // The caller hears the hold line out before the flow takes them back.
    if (!result.ok) await holdLine.catch(() => undefined);
    if (host.signal.aborted) return;
    if (result.ok) {
      host.send({ type: 'transfer', to: action.to, mode: action.mode, status: 'completed' });
      host.end('transferred');
      return;
    }
    host.send({ type: 'transfer', to: action.to, mode: action.mode, status: 'failed', reason: result.reason });
    this.history.addUser(`The transfer to ${action.to} did not go through (${result.reason}).`);
    const move = this.runtime?.transferFailed() ?? null;
    if (!move) {
      host.end('transfer_failed');
      return;
    }
    host.hook({ type: 'state_changed', from: move.fromState, to: move.toState, tool: move.via });
    for (const event of flowStateEvents(this.runtime)) host.send(event);
    this.agent.answerKeypad({ type: 'keypad_answer', entries: move.entered ? [move.entered] : [], respond: move.entered?.respond ?? true });
  }

  /** What a warm transfer tells the person: the session's model over the conversation so far, or the flow's account of it. */
  private summarize(): Promise<string> {
    return transferSummary({
      llm: this.setup.providers.llm,
      history: this.history.snapshot(),
      flowName: this.setup.flow?.id ?? null,
      path: this.runtime?.path ?? [],
      variables: this.runtime?.variables ?? {},
      signal: this.host.signal,
    });
  }

  /** A `send_dtmf` tool: the keys go down the line where the transport can play them. */
  private sendDigits(digits: string): void {
    this.host.send({ type: 'dtmf', digits, source: 'agent', moves: [] });
    if (!this.host.sendDigits) return;
    this.host.sendDigits(digits).catch((error: unknown) => this.setup.log.warn({ err: error, session: this.setup.id }, 'could not send keypad tones'));
  }

  private providerFailed({ code, error }: ErrorFrame): void {
    if (this.host.signal.aborted) return;
    const provider = error instanceof ProviderError ? error.provider : 'provider';
    const message = error instanceof ProviderError ? error.message : `${provider} failed`;
    this.setup.log.warn({ err: error, session: this.setup.id, code }, 'provider failure in session');
    this.host.send(sessionError(code, message));
    // A sentence that could not be synthesized is skipped; a turn that failed altogether gets a line.
    if (code !== 'tts_failed') this.agent.sayFallback();
  }

  /**
   * The turn-taking in force: the flow state's `turn` over the flow's `settings.turn` over the
   * server's, with what the state's tools expect the caller to answer.
   */
  private turnTaking(): { policy: TurnPolicy; hints: TurnHints } {
    const flow = this.runtime?.turnOptions();
    const policy: TurnPolicy = { ...DEFAULT_TURN_POLICY };
    // Each key from the first that sets it: the state's or flow's, then the server's.
    for (const layer of [this.setup.turnDefaults, flow]) {
      if (layer?.minInterruptionWords !== undefined) policy.minInterruptionWords = layer.minInterruptionWords;
      if (layer?.backchannels !== undefined) policy.backchannels = layer.backchannels;
      if (layer?.endpointingMs !== undefined) policy.endpointingMs = layer.endpointingMs;
      if (layer?.maxEndpointingMs !== undefined) policy.maxEndpointingMs = layer.maxEndpointingMs;
    }
    // A base wait set above the server's longest (a state's `endpointing_ms: 2000`) is a fixed wait.
    policy.maxEndpointingMs = Math.max(policy.maxEndpointingMs, policy.endpointingMs);
    return { policy, hints: flow?.hints ?? NO_HINTS };
  }

  /**
   * The VAD reports a pause after the shortest wait the state's turn-taking may choose (its fixed
   * wait when it does not adapt); the words then decide whether the turn is over.
   */
  private followStateEndpointing(): void {
    this.vad?.setEndpointingMs(shortestWaitMs(this.turnTaking().policy));
  }

  private sendMetrics(timing: TurnTiming): void {
    const report = metricsReport(timing);
    if (report) this.host.send(report);
  }
}
