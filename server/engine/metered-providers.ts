// A session's providers, telling the meter when each part is used (billing/metering.ts charges a
// part only from the minute it is first used). Thin wrappers: the engine code that calls the
// providers does not know about billing. Flow-test runs (server/testing) meter their parts with
// the same wrappers.
import type { ProviderKind } from '../providers/catalog.ts';
import type { LanguageModel, SessionProviders, SpeechToText, TextToSpeech, TranscriptionStream } from '../providers/types.ts';

type Used = (part: ProviderKind) => void;

export function meteredSpeechToText(stt: SpeechToText, used: Used): SpeechToText {
  return {
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
  };
}

export function meteredLanguageModel(llm: LanguageModel, used: Used): LanguageModel {
  return {
    provider: llm.provider,
    model: llm.model,
    stream(request) {
      used('llm');
      return llm.stream(request);
    },
    ...(llm.completeJson
      ? {
          completeJson(request) {
            used('llm');
            return llm.completeJson!(request);
          },
        }
      : {}),
  };
}

export function meteredTextToSpeech(tts: TextToSpeech, used: Used): TextToSpeech {
  return {
    provider: tts.provider,
    synthesize(text, signal, hints) {
      used('tts');
      return tts.synthesize(text, signal, hints);
    },
  };
}

export function meteredProviders(providers: SessionProviders, used: Used): SessionProviders {
  const { stt, llm, tts } = providers;
  return {
    stt: stt && meteredSpeechToText(stt, used),
    llm: llm && meteredLanguageModel(llm, used),
    tts: meteredTextToSpeech(tts, used),
  };
}
