// The fake Deepgram's own behaviour, through the real SDK socket: what it finds in audio and
// what it says about it is what the provider tests rely on.
import { DeepgramClient } from '@deepgram/sdk';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { type FakeDeepgram, startFakeDeepgram } from '../fakes/deepgram-server.ts';
import { concatPcm, pcmBytes, silence, toneBurst } from '../fakes/synthetic-audio.ts';

const RATE = 16_000;
let fake: FakeDeepgram;
beforeEach(async () => {
  fake = await startFakeDeepgram({ apiKey: 'dg-key', transcripts: ['I want to pay my invoice.', 'Yes please.'] });
});
afterEach(() => fake.close());

async function openSocket(apiKey = 'dg-key') {
  const client = new DeepgramClient({ apiKey, baseUrl: fake.url });
  const socket = await client.listen.v1.connect({
    model: 'nova-3',
    encoding: 'linear16',
    sample_rate: RATE,
    channels: 1,
    interim_results: 'true',
    vad_events: 'true',
    endpointing: 300,
    utterance_end_ms: 1000,
    reconnectAttempts: 0,
  });
  const messages: Array<Record<string, unknown>> = [];
  const closed = new Promise<number>((resolve) => socket.on('close', (event) => resolve(event.code)));
  socket.on('message', (message) => messages.push(message as unknown as Record<string, unknown>));
  socket.connect();
  await socket.waitForOpen();
  return { socket, messages, closed };
}

const summary = (messages: Array<Record<string, unknown>>) =>
  messages.map((m) => {
    if (m.type !== 'Results') return String(m.type);
    const transcript = (m.channel as { alternatives: Array<{ transcript: string }> }).alternatives[0]?.transcript;
    return `${m.is_final ? (m.speech_final ? 'final+speech_final' : m.from_finalize ? 'final+from_finalize' : 'final') : 'interim'}: ${transcript}`;
  });

test('two utterances with a pause between give two rounds of SpeechStarted, interims, a final and UtteranceEnd', async () => {
  const { socket, messages } = await openSocket();
  const audio = concatPcm([silence(300, RATE), toneBurst(1_000, RATE), silence(600, RATE), toneBurst(500, RATE), silence(600, RATE)]);
  for (let at = 0; at < audio.length; at += 320 * 5) socket.sendMedia(pcmBytes(audio.subarray(at, at + 320 * 5)));

  await vi.waitFor(() => expect(messages.filter((m) => m.type === 'UtteranceEnd')).toHaveLength(2));
  const said = summary(messages);
  expect(said.filter((s) => s === 'SpeechStarted')).toHaveLength(2);
  expect(said.filter((s) => s.startsWith('final'))).toEqual(['final+speech_final: I want to pay my invoice.', 'final+speech_final: Yes please.']);
  // Interims grow word by word and come before their final.
  const firstInterims = said.slice(0, said.indexOf('final+speech_final: I want to pay my invoice.')).filter((s) => s.startsWith('interim'));
  expect(firstInterims.length).toBeGreaterThan(1);
  expect(firstInterims[0]).toBe('interim: I');
  expect(firstInterims.at(-1)).toMatch(/^interim: I want to/);

  const started = messages.filter((m) => m.type === 'SpeechStarted').map((m) => m.timestamp);
  expect(started).toEqual([0.3, 1.9]);
  socket.close();
});

test('Finalize during speech answers at once with a from_finalize final; CloseStream ends with Metadata and close 1000', async () => {
  const { socket, messages, closed } = await openSocket();
  socket.sendMedia(pcmBytes(toneBurst(700, RATE)));
  socket.sendFinalize({ type: 'Finalize' });
  await vi.waitFor(() => expect(summary(messages)).toContain('final+from_finalize: I want to pay my invoice.'));
  socket.sendCloseStream({ type: 'CloseStream' });
  expect(await closed).toBe(1000);
  expect(messages.at(-1)).toMatchObject({ type: 'Metadata', channels: 1, duration: 0.7 });
  expect(fake.connections[0]?.received.map((m) => m.type)).toEqual(['Finalize', 'CloseStream']);
});

test('the upgrade carries the query and the Token key, and a wrong key is refused with 401', async () => {
  const { socket } = await openSocket();
  expect(fake.connections[0]?.query).toMatchObject({ model: 'nova-3', encoding: 'linear16', sample_rate: '16000', interim_results: 'true', endpointing: '300' });
  expect(fake.connections[0]?.headers.authorization).toBe('Token dg-key');
  socket.close();
  await expect(openSocket('wrong')).rejects.toMatchObject({ message: expect.stringContaining('401') });
});

test('with word times, a Finalize at a pause inside a sentence answers the words said so far, and the rest comes after', async () => {
  await fake.close();
  // "for" ends 1,000 ms into the line's speech, "four" 400 ms of speech later, after a pause.
  fake = await startFakeDeepgram({ apiKey: 'dg-key', transcripts: ["I'd like to book a table for four"], wordEndsMs: [[150, 300, 400, 550, 650, 850, 1_000, 1_400]] });
  const { socket, messages } = await openSocket();
  socket.sendMedia(pcmBytes(concatPcm([silence(300, RATE), toneBurst(1_000, RATE), silence(200, RATE)])));
  socket.sendFinalize({ type: 'Finalize' });
  await vi.waitFor(() => expect(summary(messages).filter((s) => s.startsWith('final'))).toEqual(["final+from_finalize: I'd like to book a table for"]));
  socket.sendMedia(pcmBytes(concatPcm([toneBurst(400, RATE), silence(600, RATE)])));
  await vi.waitFor(() => expect(summary(messages).filter((s) => s.startsWith('final'))).toEqual(["final+from_finalize: I'd like to book a table for", 'final+speech_final: four']));
  expect(fake.transcripts).toEqual([]);
  socket.close();
});
