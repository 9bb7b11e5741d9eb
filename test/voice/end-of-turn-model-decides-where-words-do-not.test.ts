// The server's end-of-turn model (--turn-model) is asked at a pause whose words decide nothing
// (neither unfinished nor a whole short answer): a model that hears a finished turn ends it at the
// shortest wait, one that hears the caller not done waits the longest. Words that do decide are
// not asked about. Real speech through Silero and the Deepgram fake; the models are tiny ONNX
// files with Smart Turn v3's input and output, run by the real loader in its worker.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { afterThisFile } from '../support/cleanups.ts';
import { tinyOnnxModel } from '../support/tiny-onnx.ts';
import { useVoiceRig } from '../support/voice-server.ts';

/** Sigmoid of ±(mean of |features|): always above one half ("finished"), or always below. */
function constantVerdictModel(finished: boolean): Uint8Array {
  return tinyOnnxModel({
    inputs: [['input_features', [1, 80, 800]]],
    outputs: [['probability', [1, 1, 1]]],
    nodes: [
      { op: 'Abs', inputs: ['input_features'], outputs: ['size'] },
      { op: 'ReduceMean', inputs: ['size'], outputs: ['mean'], ints: { axes: [1, 2] }, int: { keepdims: 1 } },
      ...(finished ? [{ op: 'Sigmoid', inputs: ['mean'], outputs: ['probability'] }] : [
        { op: 'Neg', inputs: ['mean'], outputs: ['negated'] },
        { op: 'Sigmoid', inputs: ['negated'], outputs: ['probability'] },
      ]),
    ],
  });
}

const dir = await mkdtemp(join(tmpdir(), 'voxflow-turn-model-'));
afterThisFile(() => rm(dir, { recursive: true, force: true }));
const paths = { finished: join(dir, 'finished.onnx'), notDone: join(dir, 'not-done.onnx') };
await writeFile(paths.finished, constantVerdictModel(true));
await writeFile(paths.notDone, constantVerdictModel(false));

const rules = [{ when: { lastRole: 'none' as const }, respond: { text: 'Hello.' } }, { respond: { text: 'Okay.' } }];

for (const [verdict, path, reason, wait] of [
  ['a finished turn', paths.finished, 'model_complete', (ms: number) => expect(ms).toBeLessThan(500)],
  ['the caller not done', paths.notDone, 'model_unfinished', (ms: number) => expect(ms).toBe(1_500)],
] as const) {
  describe(`an end-of-turn model that hears ${verdict}`, () => {
    const rig = useVoiceRig({ rules, tts: 'openai', openai: { msPerWord: 20 }, config: { engine: { turnModel: path } } });

    it(`decides a pause the words leave open (${reason}), and the words win where they decide`, { timeout: 60_000 }, async () => {
      rig.deepgram.transcripts.splice(0, Infinity, 'I would like some coffee', 'Um');
      const client = await rig.connect({});
      await client.waitFor('agent_stopped_speaking', undefined, 30_000);
      await client.speak('I would like some coffee', { silenceAfterMs: 2_000 });
      const ended = await client.waitFor('turn_end', undefined, 20_000);
      expect(ended).toMatchObject({ reason, transcript: 'I would like some coffee' });
      wait(ended.wait_ms);
      await client.waitFor('agent_stopped_speaking', (e) => client.events.indexOf(e) > client.events.indexOf(ended), 20_000);
      // "Um" looks unfinished by its words alone: the longest wait, whatever the model would say.
      await client.speak('Um', { silenceAfterMs: 2_000 });
      const filler = await client.waitFor('turn_end', (e) => e.transcript === 'Um', 20_000);
      expect(filler).toMatchObject({ reason: 'unfinished', wait_ms: 1_500 });
      client.close();
    });
  });
}
