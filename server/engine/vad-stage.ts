// The VAD / end-of-turn stage: the caller's audio in, their speech and its turn boundaries out.
// The turn tracker itself (user-input.ts over vad-turns.ts) is built by the host, Silero on its
// worker thread by default; this stage only turns its callbacks into frames. An end-of-turn model
// that judges the words as well as the silence would be another UserTurnInput behind this stage.
import type { CallerAudioFrame, CallerSpeechFrames, StageOutput, WarningFrame } from './frames.ts';
import type { TurnListener, UserTurnInput } from './user-input.ts';

export class VadStage {
  readonly #input: UserTurnInput;

  constructor(userInput: (listener: TurnListener) => UserTurnInput, out: Pick<StageOutput<CallerSpeechFrames | WarningFrame>, 'push'>) {
    this.#input = userInput({
      onSpeechStarted: (preRoll) => out.push({ type: 'speech_started', preRoll }),
      onSpeech: (pcm) => out.push({ type: 'caller_speech', pcm }),
      onTurnEnded: (lastVoicedAt) => out.push({ type: 'turn_ended', lastVoicedAt }),
      onVoicing: (voicing) => out.push({ type: 'caller_voicing', voicing }),
      onError: (error) => out.push({ type: 'warning', code: 'vad_failed', message: `Voice activity detection failed: ${String(error)}` }),
    });
  }

  push(frame: CallerAudioFrame): void {
    this.#input.push(frame.pcm);
  }

  /** The silence that ends the caller's turn from now on (a flow state's `endpointing_ms`); null: the server's. */
  setEndpointingMs(ms: number | null): void {
    this.#input.setEndpointingMs?.(ms);
  }

  close(): void {
    this.#input.close();
  }
}
