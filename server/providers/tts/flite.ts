// Flite, the embedded offline TTS (the default when no TTS vendor is configured). flite is a
// WASI command-line program whose runs are synchronous, so it runs in worker threads
// (flite-worker.mjs); this side queues jobs, hands them over one at a time so an aborted job
// that has not started is simply dropped, and streams the result out in ~100 ms chunks so the
// engine can start sending audio before the caller has consumed the sentence.
//
// The pieces: the text flite is given (flite-text.ts), the pool that schedules sentences onto
// worker threads by urgency and priority (flite-pool.ts), and one worker thread with its protocol (flite-worker-host.ts).
// This file is the provider: voices, the shared pool, the sentences kept to be said again
// (flite-cache.ts), and a sentence streamed out in chunks.
import { StreamingResampler } from '../../audio/resampler.ts';
import { FLITE_VOICES } from '../catalog.ts';
import { ENGINE_SAMPLE_RATE, ProviderError } from '../types.ts';
import type { SynthesisHints, TextToSpeech } from '../types.ts';
import { FliteSpeechCache } from './flite-cache.ts';
import { FlitePool, type FliteRunner } from './flite-pool.ts';
import { cleanTextForFlite, splitForFlite } from './flite-text.ts';
import { FliteWorkerHost, type FliteAudio } from './flite-worker-host.ts';

export { FLITE_MAX_CHARS, cleanTextForFlite, splitForFlite } from './flite-text.ts';
export { FlitePool, defaultFliteWorkers, type FlitePoolOptions } from './flite-pool.ts';
export { FliteWorkerHost, type FliteAudio, type FliteWorkerHostOptions } from './flite-worker-host.ts';
export { FLITE_CACHE_BYTES, FliteSpeechCache } from './flite-cache.ts';

export { FLITE_VOICES };
export type FliteVoice = (typeof FLITE_VOICES)[number];

const CHUNK_MS = 100;
/** A sentence with less than this left to play before it is one the caller is waiting for. */
export const PROMPT_BELOW_MS = 500;

export interface FliteTextToSpeech extends TextToSpeech {
  /** Starts the worker and warms it up, so the first sentence is not also the slowest. */
  warmUp(): Promise<void>;
  /** Terminates the worker this provider runs on; the next call starts a fresh one. */
  close(): Promise<void>;
  /**
   * The same voice for one account's calls, keeping the sentences they say in the process's
   * cache for that account alone (flite-cache.ts says why). The provider itself, used without an
   * account, keeps nothing unless it was given a cache of its own.
   */
  forAccount(accountId: string): TextToSpeech;
}

export interface FliteOptions {
  voice?: FliteVoice;
  /** One worker host for every sentence (tests), or a pool; by default the process's shared pool. */
  host?: FliteWorkerHost | FlitePool;
  /**
   * Sentences said before, said again without running flite (flite-cache.ts). By default the
   * process's shared cache on the shared pool, used only through forAccount(), and none on a host
   * of the caller's own (tests of the workers, benches of synthesis); null for none. A cache given
   * here is used by the provider itself too (one scope).
   */
  cache?: FliteSpeechCache | null;
}

function runnerOf(host: FliteWorkerHost | FlitePool): FliteRunner {
  if (host instanceof FlitePool) return host;
  return { run: (text, voice, signal) => host.run(text, voice, signal), warmUp: () => host.warmUp(), close: () => host.close() };
}

export function createFliteTts(options: FliteOptions = {}): FliteTextToSpeech {
  const voice = options.voice ?? 'slt';
  if (!FLITE_VOICES.includes(voice)) {
    // flite falls back to an 8 kHz voice on an unknown name instead of failing: refuse it here.
    throw new ProviderError('flite', 'bad_request', `flite has no voice "${voice}"; choose one of ${FLITE_VOICES.join(', ')}`, false);
  }
  const runner = options.host ? runnerOf(options.host) : sharedPool();
  const cache = options.cache !== undefined ? options.cache : options.host ? null : sharedCache;
  // A flow's voice is used when flite has it; another vendor's voice name is not flite's to refuse.
  const voiceFor = (hints?: SynthesisHints): FliteVoice => (FLITE_VOICES.includes(hints?.voice as FliteVoice) ? (hints!.voice as FliteVoice) : voice);
  const unscoped = options.cache ? { cache: options.cache, scope: '' } : null;
  return {
    provider: 'flite',
    synthesize: (text, signal, hints) => synthesizeWithFlite(runner, unscoped, voiceFor(hints), text, signal, hints),
    forAccount: (accountId) => {
      const kept = cache ? { cache, scope: `account:${accountId}` } : null;
      return { provider: 'flite', synthesize: (text, signal, hints) => synthesizeWithFlite(runner, kept, voiceFor(hints), text, signal, hints) };
    },
    warmUp: () => runner.warmUp(),
    close: () => runner.close(),
  };
}

/** Terminates the process-wide flite workers (process shutdown, tests). */
export async function shutdownFlite(): Promise<void> {
  await defaultPool?.close();
}

let holders = 0;

/**
 * Holds the process-wide flite workers for one user of them (a server, a `voxflow test` run); the
 * returned release stops the workers once no one holds them. Several servers can share a process
 * (the desktop app's, a test's), and one closing must not cut another's sentence short: stopping
 * the pool fails every sentence in it ("flite was shut down").
 */
export function holdFlite(): () => Promise<void> {
  holders += 1;
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    holders -= 1;
    if (holders === 0) await shutdownFlite();
  };
}

async function* synthesizeWithFlite(
  runner: FliteRunner,
  kept: { cache: FliteSpeechCache; scope: string } | null,
  voice: FliteVoice,
  text: string,
  signal: AbortSignal,
  hints?: SynthesisHints,
): AsyncGenerator<Int16Array> {
  const parts = splitForFlite(cleanTextForFlite(text));
  if (parts.length === 0) return;
  signal.throwIfAborted();
  // Without hints (a caller outside the engine) a sentence is taken to be awaited.
  const awaited = (hints?.aheadMs ?? 0) < PROMPT_BELOW_MS;
  // Ends the look-ahead job too when the consumer stops early (break, or its own error).
  const stop = new AbortController();
  const jobSignal = AbortSignal.any([signal, stop.signal]);
  const start = (part: string, first: boolean): Promise<{ audio: FliteAudio; kept: boolean }> => {
    const said = kept?.cache.get(kept.scope, voice, part);
    if (said) return Promise.resolve({ audio: said, kept: true });
    // Later parts of a long text are synthesized while the earlier ones play: look-ahead.
    const job = runner.run(part, voice, jobSignal, first && awaited).then((audio) => {
      kept?.cache.set(kept.scope, voice, part, audio);
      return { audio, kept: false };
    });
    job.catch(() => {}); // awaited below; this only stops an unawaited look-ahead from being "unhandled"
    return job;
  };
  let resampler: StreamingResampler | null = null;
  try {
    let next = start(parts[0]!, true);
    for (let i = 0; i < parts.length; i++) {
      const { audio, kept: fromMemory } = await next;
      // Synthesize the next part while this one is being played out.
      if (i + 1 < parts.length) next = start(parts[i + 1]!, false);
      if (audio.sampleRate !== ENGINE_SAMPLE_RATE) resampler ??= new StreamingResampler(audio.sampleRate, ENGINE_SAMPLE_RATE);
      const step = Math.round((audio.sampleRate * CHUNK_MS) / 1000);
      for (let offset = 0; offset < audio.samples.length; offset += step) {
        signal.throwIfAborted();
        const chunk = audio.samples.subarray(offset, offset + step);
        // Resampled a chunk at a time so no single step holds the event loop for long. Kept audio
        // is handed out as copies: what a listener does with a chunk must not change the next call's.
        yield resampler ? resampler.process(chunk) : fromMemory ? chunk.slice() : chunk;
      }
    }
    const tail = resampler?.flush();
    if (tail && tail.length > 0) yield tail;
  } finally {
    stop.abort();
  }
}

let defaultPool: FlitePool | null = null;
/** Outlives the pool's workers (shutdownFlite): a process's servers, one after another, say the same lines. */
const sharedCache = new FliteSpeechCache();

function sharedPool(): FlitePool {
  return (defaultPool ??= new FlitePool());
}
