// Real Silero on real (synthesized) speech, pushed the way the WebSocket delivers it.
import { afterAll, expect, test } from 'vitest';
import { rms } from '../../server/audio/pcm.ts';
import { VadTurnTracker } from '../../server/engine/vad-turns.ts';
import type { TurnEvent } from '../../server/engine/turn-detector.ts';
import { shutdownFlite } from '../../server/providers/tts/flite.ts';
import { createSileroVad, releaseSileroModels } from '../../server/providers/turn/silero.ts';
import { padWithSilence, synthesizeSpeech } from '../support/speech.ts';

afterAll(async () => {
  await shutdownFlite();
  await releaseSileroModels();
});

/** First and last sample of the 10 ms windows within 35 dB of the loudest one. */
function audibleExtent(pcm: Int16Array): { start: number; end: number } {
  const window = 160;
  const levels: number[] = [];
  for (let i = 0; i + window <= pcm.length; i += window) levels.push(20 * Math.log10(rms(pcm.subarray(i, i + window))));
  const floor = Math.max(...levels) - 35;
  const audible = levels.flatMap((level, index) => (level > floor ? [index] : []));
  const first = audible[0]!;
  const last = audible.at(-1)!;
  return { start: first * window, end: (last + 1) * window };
}

test('a spoken question between two seconds of silence is one turn spanning the speech', async () => {
  const speech = await synthesizeSpeech('Is it an animal?');
  const truth = audibleExtent(speech);
  const lead = 16_000; // 1 s of silence before
  const audio = padWithSilence(speech, 1000, 1000);

  const tracker = new VadTurnTracker(createSileroVad());
  const events: TurnEvent[] = [];
  for (let offset = 0; offset < audio.length; offset += 1600) events.push(...(await tracker.push(audio.subarray(offset, offset + 1600))));
  tracker.close();

  expect(events.map((event) => event.type)).toEqual(['speech_started', 'turn_ended']);
  const ended = events[1] as Extract<TurnEvent, { type: 'turn_ended' }>;
  const toleranceSamples = 150 * 16;
  expect(Math.abs(ended.speechStartSample - (lead + truth.start))).toBeLessThanOrEqual(toleranceSamples);
  expect(Math.abs(ended.speechEndSample - (lead + truth.end))).toBeLessThanOrEqual(toleranceSamples);
  // Endpointing: the turn ends once 500 ms of silence follow the last voiced frame.
  expect(ended.atSample - ended.speechEndSample).toBeGreaterThanOrEqual(500 * 16);
  expect(ended.atSample - ended.speechEndSample).toBeLessThan(600 * 16);
});
