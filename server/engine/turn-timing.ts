// The timestamps of one agent turn and the metrics derived from them (docs/api.md#voice-sessions):
//   endpointing_ms    last voiced frame → turn end
//   stt_ms            turn end → final transcript
//   llm_ttft_ms       first model request → its first chunk
//   tts_ttfb_ms       first speech request → its first audio
//   voice_to_voice_ms last voiced frame (typed: the text's arrival) → first agent audio frame out
//   server_ms         voice_to_voice − the four parts above: what our own code adds
import type { ServerEvent, TurnMetrics } from '../protocol/events.ts';

export type TurnKind = 'greeting' | 'voice' | 'typed' | 'simulated';

const round = (ms: number | undefined) => (ms === undefined ? null : Math.round(ms * 10) / 10);

export class TurnTiming {
  private readonly createdAt: number;
  private lastVoicedAt: number | undefined;
  private turnEndAt: number | undefined;
  private transcriptAt: number | undefined;
  private modelRequestAt: number | undefined;
  private modelFirstAt: number | undefined;
  private speechRequestAt: number | undefined;
  private speechFirstAt: number | undefined;
  private firstAudioOutAt: number | undefined;
  private reported = false;

  constructor(
    readonly turn: number,
    readonly kind: TurnKind,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.createdAt = now();
  }

  /** `endedAt`: when the turn was over, if that was before now (its transcript came after the wait ran out). */
  userTurnEnded(lastVoicedAt: number, endedAt: number = this.now()): void {
    this.lastVoicedAt = lastVoicedAt;
    this.turnEndAt = endedAt;
  }

  transcribed(): void {
    this.transcriptAt = this.now();
  }

  /** Only the turn's first model request and first speech request count (time to first). */
  modelRequested(): void {
    this.modelRequestAt ??= this.now();
  }

  modelAnswered(): void {
    this.modelFirstAt ??= this.now();
  }

  speechRequested(): void {
    this.speechRequestAt ??= this.now();
  }

  speechAnswered(): void {
    this.speechFirstAt ??= this.now();
  }

  /** True the first time: that is when the turn's metrics are complete. */
  markFirstAudioOut(): boolean {
    if (this.firstAudioOutAt !== undefined) return false;
    this.firstAudioOutAt = this.now();
    return true;
  }

  /** Metrics go out once per turn; false when they already did. */
  claimReport(): boolean {
    if (this.reported) return false;
    this.reported = true;
    return true;
  }

  metrics(): TurnMetrics {
    const span = (from: number | undefined, to: number | undefined) => (from === undefined || to === undefined ? undefined : Math.max(0, to - from));
    const endpointing = span(this.lastVoicedAt, this.turnEndAt);
    const stt = span(this.turnEndAt, this.transcriptAt);
    const ttft = span(this.modelRequestAt, this.modelFirstAt);
    const ttfb = span(this.speechRequestAt, this.speechFirstAt);
    const origin = this.kind === 'voice' ? this.lastVoicedAt : this.createdAt;
    const voiceToVoice = span(origin, this.firstAudioOutAt);
    const server = voiceToVoice === undefined ? undefined : Math.max(0, voiceToVoice - (endpointing ?? 0) - (stt ?? 0) - (ttft ?? 0) - (ttfb ?? 0));
    return {
      turn: this.turn,
      endpointing_ms: round(endpointing),
      stt_ms: round(stt),
      llm_ttft_ms: round(ttft),
      tts_ttfb_ms: round(ttfb),
      voice_to_voice_ms: round(voiceToVoice),
      server_ms: round(server),
    };
  }
}

/** The turn's `metrics` event, the first time it is asked for (a turn reports once); null after. */
export function metricsReport(timing: TurnTiming): ServerEvent | null {
  return timing.claimReport() ? { type: 'metrics', ...timing.metrics() } : null;
}
