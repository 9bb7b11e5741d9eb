// The STT stage: the caller's speech in (past the VAD and any filter after it), their turns out.
// Speech starting interrupts the agent (barge-in) and feeds the speech recognizer, from the
// pre-roll on; the turn's end flushes it, and a transcript with words in it becomes a caller turn
// for the agent to answer.
import { sessionError } from '../protocol/session-errors.ts';
import type { SpeechToText, TranscriptionStream } from '../providers/types.ts';
import type { CallerSpeechFrames, CallerTurnFrame, CallerWordsFrame, ErrorFrame, InterruptFrame, StageOutput } from './frames.ts';
import { TurnTiming } from './turn-timing.ts';

export interface SpokenTurnsOptions {
  readonly stt: SpeechToText | null;
  /** What the recognizer is opened with: the session's language, the flow's own model. */
  readonly sttOptions: { language: string; model?: string };
  /** The longest a turn's transcript is waited for. */
  readonly sttFlushTimeoutMs: number;
  /** Aborted when the session ends. */
  readonly signal: AbortSignal;
  /** The session's next turn number (typed and spoken turns share the count). */
  nextTurnNumber(): number;
}

export type SpokenTurnsOutput = InterruptFrame | CallerTurnFrame | CallerWordsFrame | ErrorFrame;

export class SpokenTurns {
  private stt: TranscriptionStream | null = null;
  private userSpeaking = false;

  constructor(
    private readonly options: SpokenTurnsOptions,
    private readonly out: StageOutput<SpokenTurnsOutput>,
  ) {}

  push(frame: CallerSpeechFrames): void {
    if (this.options.signal.aborted) return;
    switch (frame.type) {
      case 'speech_started':
        this.userSpeaking = true;
        this.out.send({ type: 'user_started_speaking' });
        // Barge-in: the caller talking over the agent (or over its thinking) stops it at once;
        // an agent with nothing in flight takes no notice.
        this.out.push({ type: 'interrupt' });
        if (this.options.stt) {
          this.stt ??= this.options.stt.open(this.options.sttOptions);
          this.stt.write(frame.preRoll);
        }
        return;
      case 'caller_speech':
        this.stt?.write(frame.pcm);
        return;
      case 'turn_ended':
        void this.transcribeTurn(frame.lastVoicedAt);
        return;
    }
  }

  /** The session ended: the recognizer's stream is closed. */
  close(): void {
    this.stt?.close();
  }

  private async transcribeTurn(lastVoicedAt: number): Promise<void> {
    const { signal } = this.options;
    if (!this.userSpeaking) return;
    this.userSpeaking = false;
    const timing = new TurnTiming(this.options.nextTurnNumber(), 'voice');
    timing.userTurnEnded(lastVoicedAt);
    this.out.send({ type: 'user_stopped_speaking' });
    if (!this.stt) {
      this.out.send(sessionError('stt_unavailable'));
      return;
    }
    let text: string;
    try {
      const timeout = AbortSignal.timeout(this.options.sttFlushTimeoutMs);
      text = (await this.stt.flush(AbortSignal.any([signal, timeout]))).trim();
    } catch (error) {
      if (!signal.aborted) this.out.push({ type: 'error', code: 'stt_failed', error });
      return;
    }
    timing.transcribed();
    if (signal.aborted) return;
    // Nothing recognised (a cough, noise), or the caller went on talking: that next turn answers.
    if (!text) return;
    if (this.userSpeaking) this.out.push({ type: 'caller_words', text });
    else this.out.push({ type: 'caller_turn', text, timing });
  }
}
