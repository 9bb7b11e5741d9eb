// Real speech for tests that feed audio into the engine (VAD, WebSocket, WebRTC): synthesized
// offline by flite, so no fixture files and no network.
import { writeFile } from 'node:fs/promises';
import { concatPcm, encodeWav, samplesForMs } from '../../server/audio/pcm.ts';
import { resample } from '../../server/audio/resampler.ts';
import { createFliteTts } from '../../server/providers/tts/flite.ts';
import type { FliteVoice } from '../../server/providers/tts/flite.ts';
import { ENGINE_SAMPLE_RATE } from '../../server/providers/types.ts';

/**
 * `text` spoken by flite as PCM16 mono at `sampleRate` (16 kHz, or e.g. 48 kHz for WebRTC).
 * Each sentence is synthesized once per test file: a test that speaks at a chosen moment (over
 * the agent, inside a window) can synthesize it beforehand, so a loaded machine's slow flite run
 * does not delay the words past the moment.
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

async function synthesize(text: string, voice: FliteVoice, sampleRate: number): Promise<Int16Array> {
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
