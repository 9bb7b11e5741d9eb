// A session's providers, telling the meter when each part is used (billing/metering.ts charges a
// part only from the minute it is first used). Thin wrappers: the engine code that calls the
// providers does not know about billing.
import type { ProviderKind } from '../providers/catalog.ts';
import type { SessionProviders, TranscriptionStream } from '../providers/types.ts';

export function meteredProviders(providers: SessionProviders, used: (part: ProviderKind) => void): SessionProviders {
  const { stt, llm, tts } = providers;
  return {
    stt: stt && {
      provider: stt.provider,
      open(options): TranscriptionStream {
        const stream = stt.open(options);
        return {
          // Speech reaches the provider only in a user's turn (the VAD gates it): that is use.
          write(pcm) {
            used('stt');
            stream.write(pcm);
          },
          flush: (signal) => stream.flush(signal),
          get onInterim() {
            return stream.onInterim;
          },
          set onInterim(listener) {
            stream.onInterim = listener;
          },
          close: () => stream.close(),
        };
      },
    },
    llm: llm && {
      provider: llm.provider,
      model: llm.model,
      stream(request) {
        used('llm');
        return llm.stream(request);
      },
    },
    tts: {
      provider: tts.provider,
      synthesize(text, signal, hints) {
        used('tts');
        return tts.synthesize(text, signal, hints);
      },
    },
  };
}
