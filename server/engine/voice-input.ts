// How a server hears callers: the turn tracker over a voice activity model, and whether it
// works yet. The default is Silero on its worker thread, loaded once the server listens (a few
// hundred ms of CPU that should not delay start-up). buildApp takes another factory, so a
// server that will never carry audio (most API tests) does not load the model at all.
import { createSileroVad } from '../providers/turn/silero.ts';
import type { TurnListener, UserTurnInput } from './user-input.ts';
import { createVadUserInput } from './user-input.ts';

export interface VoiceInput {
  /** Builds a session's turn tracker; null when this server has no voice activity model. */
  userInput: ((listener: TurnListener) => UserTurnInput) | null;
  /** False once the model is known not to work. */
  hearsVoice(): boolean;
  /** The model has finished loading. */
  voiceReady(): boolean;
  /** Loads the model; called after the server listens. Rejects when it cannot be loaded. */
  load(): Promise<void>;
}

export type VoiceInputFactory = () => VoiceInput;

export const sileroVoiceInput: VoiceInputFactory = () => {
  const vad = createSileroVad();
  const state = { failed: false, ready: false };
  return {
    userInput: createVadUserInput(vad),
    hearsVoice: () => !state.failed,
    voiceReady: () => state.ready,
    load: () =>
      vad.load().then(
        () => {
          state.ready = true;
        },
        (error: unknown) => {
          state.failed = true;
          throw error;
        },
      ),
  };
};
