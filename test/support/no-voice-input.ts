// A server that never carries audio needs no voice activity model: this voice input is the
// absence of one (no turn tracker, nothing to load), not a stand-in for Silero. Sessions, typed
// turns and the simulator work as usual; audio sent to such a server gets the engine's error.
import type { VoiceInputFactory } from '../../server/engine/voice-input.ts';

export const noVoiceInput: VoiceInputFactory = () => ({
  userInput: null,
  hearsVoice: () => false,
  voiceReady: () => false,
  load: () => Promise.resolve(),
});
