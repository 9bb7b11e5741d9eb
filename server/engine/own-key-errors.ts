// When a part runs on the account's own key and the provider refuses that key, the session's
// error says it is the account's key (and where to change it), not a fault of the server.
import { ProviderError, type SessionProviders } from '../providers/types.ts';

function relabel(error: unknown): unknown {
  if (!(error instanceof ProviderError) || error.kind !== 'auth') return error;
  return new ProviderError(error.provider, 'auth', `${error.provider} refused your account's own key (${error.message}); check it in Settings → Provider keys`, false, { cause: error });
}

async function* relabelled<T>(stream: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* stream;
  } catch (error) {
    throw relabel(error);
  }
}

export function ownKeyErrors(providers: SessionProviders, own: { stt: boolean; llm: boolean; tts: boolean }): SessionProviders {
  const { stt, llm, tts } = providers;
  return {
    stt:
      stt && own.stt
        ? {
            provider: stt.provider,
            open(options) {
              const stream = stt.open(options);
              const flush = stream.flush.bind(stream);
              stream.flush = (signal) => flush(signal).catch((error: unknown) => Promise.reject(relabel(error)));
              return stream;
            },
          }
        : stt,
    llm:
      llm && own.llm
        ? {
            provider: llm.provider,
            model: llm.model,
            stream: (request) => relabelled(llm.stream(request)),
            ...(llm.completeJson ? { completeJson: (request) => llm.completeJson!(request).catch((error: unknown) => Promise.reject(relabel(error))) } : {}),
          }
        : llm,
    tts: own.tts ? { provider: tts.provider, synthesize: (text, signal, hints) => relabelled(tts.synthesize(text, signal, hints)) } : tts,
  };
}
