// One test run's voice session: the engine's own VoiceSession, in this process, with no transport.
// The runner acts as a client would (typed turns, simulate_tool, or the caller's audio) and sees
// what a client sees (the protocol events), each stamped with the run's clock. Only one thing is
// read from the inside: whether the session is waiting for the user, so a step ends as soon as
// the agent is done rather than after a guessed pause.
import { SessionHooks } from '../engine/hooks.ts';
import type { SendToolRequest } from '../engine/http-tools.ts';
import { VoiceSession } from '../engine/session.ts';
import { createVadUserInput } from '../engine/user-input.ts';
import type { FlowDocument } from '../flow/types.ts';
import type { ServerEvent } from '../protocol/events.ts';
import type { LanguageModel, SpeechToText, TextToSpeech, TranscriptionStream, VoiceActivityModel } from '../providers/types.ts';
import { CallerAudio } from './caller-audio.ts';
import { FRAME_MS, type RunClock } from './clocks.ts';

export interface StampedEvent {
  /** Milliseconds on the run's clock since the session started. */
  at: number;
  /** performance.now() when it was sent: the real time a typed run's model took. */
  wall: number;
  event: ServerEvent;
}

export interface TestSessionSetup {
  flow: FlowDocument;
  flowId: string | null;
  context: Record<string, unknown>;
  llm: LanguageModel;
  tts: TextToSpeech;
  /** Audio runs only. */
  stt: SpeechToText | null;
  vad: VoiceActivityModel | null;
  clock: RunClock;
  language?: string;
  /** Answers the flow's http tools (a test never calls the real service). */
  sendToolRequest?: SendToolRequest;
  /** The agent's audio, 20 ms frames as the session plays them to the caller (a spoken simulated caller hears it). */
  onAgentAudio?: (frame: Int16Array) => void;
}

/** How a wait for the agent ended. */
export type Settled = 'idle' | 'barge_in' | 'timeout' | 'ended';

/** After an utterance, the longest the voice activity model may take to notice its end. */
const TURN_END_GRACE_MS = 2_500;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const nextTurnOfLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

let sessions = 0;

export class TestSession {
  readonly events: StampedEvent[] = [];
  readonly session: VoiceSession;
  private readonly caller: CallerAudio | null;
  private modelCalls = 0;
  private flushes = 0;
  /** Ends settle()'s current wait early: something it looks at may have changed. */
  #wake: (() => void) | null = null;
  private readonly startedAt: number;

  constructor(private readonly setup: TestSessionSetup) {
    const { clock } = setup;
    this.startedAt = clock.now();
    const silent = { info() {}, warn() {}, error() {} };
    const audio = setup.vad !== null;
    this.session = new VoiceSession(
      {
        id: `test_${++sessions}`,
        accountId: 'flow-test',
        flowId: setup.flowId,
        flow: setup.flow,
        context: setup.context,
        metadata: {},
        transport: 'websocket',
        assistantPrompt: '',
        allowSimulator: true,
        language: setup.language ?? 'en',
        providers: { llm: this.watchModel(setup.llm), stt: setup.stt ? this.watchTranscriber(setup.stt) : null, tts: setup.tts },
        userInput: setup.vad ? createVadUserInput(setup.vad) : null,
        meter: null,
        hooks: new SessionHooks([], silent),
        clock: clock.audio,
        log: silent,
        recordEnd: async () => {},
        audioNow: () => clock.now(),
        unlimitedDrivenTurns: true,
        sendToolRequest: setup.sendToolRequest ?? null,
      },
      {
        sendEvent: (event) => {
          this.events.push({ at: clock.now() - this.startedAt, wall: performance.now(), event: structuredClone(event) });
          this.wake();
        },
        sendAudio: (frame) => setup.onAgentAudio?.(frame),
        close: () => {},
        // A flow test has no phone line: a transfer, cold or warm, is taken as made (the person
        // answers at once), so a step can expect `transferred_to`; no summary is asked of the model.
        transfer: async () => ({ ok: true }),
      },
    );
    this.caller = audio ? new CallerAudio(clock, (frame) => this.session.pushAudio(frame)) : null;
  }

  get now(): number {
    return this.setup.clock.now() - this.startedAt;
  }

  start(): Promise<void> {
    return this.session.start();
  }

  /** A typed user turn. */
  type(text: string): void {
    this.session.handleMessage({ type: 'text', text });
  }

  /** The caller says this (audio runs). */
  speak(pcm: Int16Array): void {
    if (!this.caller) throw new Error('this run has no caller audio');
    this.caller.say(pcm);
  }

  /** Keys the caller presses on the phone's keypad. */
  pressKeys(digits: string): void {
    this.session.pushDigits(digits);
  }

  simulate(tool: string, args: Record<string, unknown>): void {
    this.session.handleMessage({ type: 'simulate_tool', name: tool, arguments: args });
  }

  /**
   * Waits until the agent is done with what the last action started, or — with `bargeInAfterMs`
   * — until it has been speaking that long (then the next action cuts it off). Typed runs play
   * the reply on their stepped clock meanwhile.
   */
  async settle(options: { fromEvent: number; spoke: boolean; bargeInAfterMs?: number; timeoutMs: number; signal?: AbortSignal }): Promise<Settled> {
    const deadline = performance.now() + options.timeoutMs;
    const { clock } = this.setup;
    for (let quietChecks = 0; ; ) {
      if (this.session.isEnded) return 'ended';
      // A stopped run (the server stopping, its wall time, its credit) waits no longer.
      if (performance.now() > deadline || options.signal?.aborted) return 'timeout';
      const speakingSince = this.speakingSince(options.fromEvent);
      if (options.bargeInAfterMs !== undefined && speakingSince !== null && this.now - speakingSince >= options.bargeInAfterMs) return 'barge_in';
      if (this.quiet(options.fromEvent, options.spoke)) {
        // Seen quiet across a turn of the event loop twice: no callback was about to start more.
        if (++quietChecks >= 2) return 'idle';
        await (clock.stepped ? nextTurnOfLoop() : sleep(FRAME_MS));
        continue;
      }
      quietChecks = 0;
      if (clock.stepped && speakingSince !== null) {
        clock.advance(FRAME_MS);
        await nextTurnOfLoop();
      } else {
        // Stepped (typed) runs wake on the next change; paced (audio) runs keep polling every
        // 10 ms of real time, the pace their quiet checks were made for.
        await (clock.stepped ? this.nextChange(1) : sleep(10));
      }
    }
  }

  /**
   * Waits for an event, the model's answer or a transcript to come in, or `ms` at most (the
   * session's idleness can change without any of those). Polling alone cost a typed run about a
   * millisecond and a half a turn: a timer of 1 ms fires after 1–2 ms.
   */
  private nextChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.#wake === done) this.#wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }

  private wake(): void {
    this.#wake?.();
  }

  async end(): Promise<void> {
    this.caller?.close();
    await this.session.end('test_finished');
  }

  /** When the agent began speaking, if it is speaking now (after event `from`). */
  private speakingSince(from: number): number | null {
    for (let i = this.events.length - 1; i >= from; i--) {
      const { event, at } = this.events[i]!;
      if (event.type === 'agent_stopped_speaking') return null;
      if (event.type === 'agent_started_speaking') return at;
    }
    return null;
  }

  private quiet(from: number, spoke: boolean): boolean {
    if (!this.session.isIdle || this.modelCalls > 0 || this.flushes > 0) return false;
    const caller = this.caller;
    if (!caller || !spoke) return true;
    if (caller.busy) return false;
    // The caller's turn: heard to its end (the voice activity model said so), or never heard.
    let started = false;
    for (let i = from; i < this.events.length; i++) {
      const { event } = this.events[i]!;
      if (event.type === 'user_started_speaking') started = true;
      if (event.type === 'user_stopped_speaking' && started) return true;
    }
    const endedAt = caller.lastUtteranceEndedAt;
    return endedAt !== null && this.setup.clock.now() - endedAt > TURN_END_GRACE_MS;
  }

  /** The model, counted while it answers: the agent is not done while it thinks. */
  private watchModel(llm: LanguageModel): LanguageModel {
    const counter = { inc: () => this.modelCalls++, dec: () => (this.modelCalls--, this.wake()) };
    return {
      provider: llm.provider,
      model: llm.model,
      async *stream(request) {
        counter.inc();
        try {
          yield* llm.stream(request);
        } finally {
          counter.dec();
        }
      },
    };
  }

  /** The transcriber, counted while it finalizes a turn. */
  private watchTranscriber(stt: SpeechToText): SpeechToText {
    const counter = { inc: () => this.flushes++, dec: () => (this.flushes--, this.wake()) };
    return {
      provider: stt.provider,
      open(options): TranscriptionStream {
        const stream = stt.open(options);
        return {
          get onInterim() {
            return stream.onInterim;
          },
          set onInterim(listener) {
            stream.onInterim = listener;
          },
          write: (pcm) => stream.write(pcm),
          async flush(signal) {
            counter.inc();
            try {
              return await stream.flush(signal);
            } finally {
              counter.dec();
            }
          },
          close: () => stream.close(),
        };
      },
    };
  }
}
