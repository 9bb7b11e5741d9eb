// The caller's spoken turns, between the VAD's turn boundaries (user-input.ts) and the agent:
// speech starting stops the agent (barge-in) and feeds the speech recognizer, from the pre-roll
// on; the turn's end flushes it, and a transcript with words in it becomes the agent's next turn.
// The flow's speech rules (flow-speech-rules.ts) may say the caller is not heard right now.
import { sessionError } from '../protocol/session-errors.ts';
import type { ServerEvent } from '../protocol/events.ts';
import type { SpeechToText, TranscriptionStream } from '../providers/types.ts';
import type { ConversationHistory } from './conversation-history.ts';
import type { FlowSpeechRules } from './flow-speech-rules.ts';
import { TurnTiming } from './turn-timing.ts';
import type { TurnListener } from './user-input.ts';

export interface SpokenTurnsHost {
  readonly stt: SpeechToText | null;
  /** What the recognizer is opened with: the session's language, the flow's own model. */
  readonly sttOptions: { language: string; model?: string };
  /** The longest a turn's transcript is waited for. */
  readonly sttFlushTimeoutMs: number;
  /** Aborted when the session ends. */
  readonly signal: AbortSignal;
  readonly history: ConversationHistory;
  readonly flowSpeech: FlowSpeechRules;
  isEnded(): boolean;
  /** The caller did something: the session is not idle. */
  noteActivity(): void;
  /** The agent is thinking or has a reply left to say: speech over it is a barge-in. */
  agentBusy(): boolean;
  interrupt(): void;
  send(event: ServerEvent): void;
  sttFailed(error: unknown): void;
  /** The session's next turn number. */
  nextTurnNumber(): number;
  /** The agent answers the caller's words. */
  answer(text: string, timing: TurnTiming): Promise<void>;
}

export class SpokenTurns implements Omit<TurnListener, 'onError'> {
  private stt: TranscriptionStream | null = null;
  private userSpeaking = false;

  constructor(private readonly host: SpokenTurnsHost) {}

  onSpeechStarted(preRoll: Int16Array): void {
    const host = this.host;
    if (host.isEnded()) return;
    host.noteActivity();
    if (!host.flowSpeech.callerStartedSpeaking()) return;
    this.userSpeaking = true;
    host.send({ type: 'user_started_speaking' });
    // Barge-in: the user talking over the agent (or over its thinking) stops it at once.
    if (host.agentBusy()) host.interrupt();
    if (host.stt) {
      this.stt ??= host.stt.open(host.sttOptions);
      this.stt.write(preRoll);
    }
  }

  onSpeech(pcm: Int16Array): void {
    this.host.noteActivity();
    if (this.host.flowSpeech.hearsCaller) this.stt?.write(pcm);
  }

  onTurnEnded(lastVoicedAt: number): void {
    this.host.noteActivity();
    if (this.host.flowSpeech.callerTurnEnded()) void this.answerTurn(lastVoicedAt);
  }

  /** The session ended: the recognizer's stream is closed. */
  close(): void {
    this.stt?.close();
  }

  private async answerTurn(lastVoicedAt: number): Promise<void> {
    const host = this.host;
    if (host.isEnded() || !this.userSpeaking) return;
    this.userSpeaking = false;
    const timing = new TurnTiming(host.nextTurnNumber(), 'voice');
    timing.userTurnEnded(lastVoicedAt);
    host.send({ type: 'user_stopped_speaking' });
    if (!this.stt) {
      host.send(sessionError('stt_unavailable'));
      return;
    }
    let text: string;
    try {
      const timeout = AbortSignal.timeout(host.sttFlushTimeoutMs);
      text = (await this.stt.flush(AbortSignal.any([host.signal, timeout]))).trim();
    } catch (error) {
      if (host.isEnded()) return;
      host.sttFailed(error);
      return;
    }
    timing.transcribed();
    if (host.isEnded() || !text || this.userSpeaking) {
      // Nothing recognised (a cough, noise), or the user went on talking: that next turn answers.
      if (text && !host.isEnded()) host.history.addUser(text);
      return;
    }
    host.send({ type: 'transcript', role: 'user', text, final: true });
    host.history.addUser(text);
    await host.answer(text, timing);
  }
}
