import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { createDeepgramSpeechToText } from '../../server/providers/stt/deepgram.ts';
import type { TranscriptionStream } from '../../server/providers/types.ts';
import { type FakeDeepgram, startFakeDeepgram } from '../fakes/deepgram-server.ts';
import { concatPcm, silence, toneBurst } from '../fakes/synthetic-audio.ts';
import { neverAborted } from './support.ts';

const RATE = 16_000;
let fake: FakeDeepgram;
let stream: TranscriptionStream;
beforeEach(async () => {
  fake = await startFakeDeepgram({ apiKey: 'dg-key', transcripts: ['I want to pay my invoice.', 'Yes, the one from March.'] });
  // A long grace period: these turns must end on Deepgram's answer to Finalize, not on quiet.
  stream = createDeepgramSpeechToText({ apiKey: 'dg-key', baseUrl: fake.url, finalizeGraceMs: 3_000 }).open({ language: 'en-US' });
});
afterEach(async () => {
  stream.close();
  await fake.close();
});

/** 20 ms frames, as the engine writes them. */
function say(pcm: Int16Array): void {
  for (let at = 0; at < pcm.length; at += 320) stream.write(pcm.subarray(at, at + 320));
}

test('interim text grows while the user speaks and the flush returns the final transcript', async () => {
  const interims: string[] = [];
  stream.onInterim = (text) => interims.push(text);
  // The turn ends 100 ms into the silence, before Deepgram's own endpointing would.
  say(concatPcm([silence(200, RATE), toneBurst(1_200, RATE), silence(100, RATE)]));
  const started = performance.now();
  expect(await stream.flush(neverAborted())).toBe('I want to pay my invoice.');
  expect(performance.now() - started).toBeLessThan(1_500);
  expect(interims.length).toBeGreaterThan(2);
  expect(interims[0]).toBe('I');
  for (const interim of interims) expect('I want to pay my invoice.'.startsWith(interim)).toBe(true);
  expect(new Set(interims).size).toBeGreaterThan(2);
  expect(fake.connections[0]?.received.map((m) => m.type)).toEqual(['Finalize']);
});

test('turns after the first reuse the connection, whether or not Deepgram ended the utterance first', async () => {
  say(concatPcm([toneBurst(800, RATE), silence(100, RATE)]));
  expect(await stream.flush(neverAborted())).toBe('I want to pay my invoice.');
  // 600 ms of silence: Deepgram's endpointing has sent speech_final before the turn ends.
  say(concatPcm([toneBurst(600, RATE), silence(600, RATE)]));
  const started = performance.now();
  expect(await stream.flush(neverAborted())).toBe('Yes, the one from March.');
  expect(performance.now() - started).toBeLessThan(1_500);
  expect(fake.connections).toHaveLength(1);
});

test('nothing connects until audio is written, and the connection asks for live 16 kHz linear16 with the Token key', async () => {
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(fake.connections).toHaveLength(0);
  say(toneBurst(100, RATE));
  await vi.waitFor(() => expect(fake.connections).toHaveLength(1));
  const connection = fake.connections[0]!;
  expect(connection.headers.authorization).toBe('Token dg-key');
  expect(connection.query).toMatchObject({
    model: 'nova-3',
    language: 'en-US',
    encoding: 'linear16',
    sample_rate: '16000',
    channels: '1',
    interim_results: 'true',
    smart_format: 'true',
    vad_events: 'true',
    endpointing: '300',
    utterance_end_ms: '1000',
  });
  // Audio written while connecting is sent once the socket opens, none of it lost.
  await vi.waitFor(() => expect(connection.audioBytes).toBe(100 * 16 * 2));
});

test('closing sends CloseStream and closes the socket normally', async () => {
  say(toneBurst(200, RATE));
  await vi.waitFor(() => expect(fake.connections[0]?.audioBytes).toBe(200 * 16 * 2));
  stream.close();
  stream.close();
  await vi.waitFor(() => expect(fake.connections[0]?.closeCode).toBe(1000));
  expect(fake.connections[0]?.received.map((m) => m.type)).toEqual(['CloseStream']);
});
