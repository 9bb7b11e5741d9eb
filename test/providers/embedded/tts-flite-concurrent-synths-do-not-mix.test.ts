import { afterAll, expect, test } from 'vitest';
import { concatPcm } from '../../../server/audio/pcm.ts';
import { createFliteTts, shutdownFlite } from '../../../server/providers/tts/flite.ts';
import { collect, neverAborted } from '../support.ts';

afterAll(() => shutdownFlite());

test('two sessions synthesizing at once each get exactly their own sentence', async () => {
  // No sentence said from memory: each of the runs compared below must be flite's own.
  const tts = createFliteTts({ cache: null });
  const say = async (text: string) => concatPcm(await collect(tts.synthesize(text, neverAborted())));
  const [question, answer] = await Promise.all([say('Is it an animal?'), say('No, it is a vegetable, try again.')]);
  // flite is deterministic, so the same text alone must give the same samples.
  expect(question).toEqual(await say('Is it an animal?'));
  expect(answer).toEqual(await say('No, it is a vegetable, try again.'));
  expect(question.length).not.toBe(answer.length);
});
