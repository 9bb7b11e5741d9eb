// The optional end-of-turn model: a file with Smart Turn v3's input and output loads and answers
// a probability for a caller's speech; anything else is refused at load with a message naming
// the file and what is wrong. The models are built here, tiny, in ONNX's own format.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTurnModel, TurnModelError, type EndOfTurnModel } from '../../server/engine/turn-model.ts';
import { afterThisTest } from '../support/after-this-test.ts';
import { tinyOnnxModel, tinySmartTurnModel } from '../support/tiny-onnx.ts';

// Each test loads the model in a worker (onnxruntime and a run on silence) up to five times: 15 s
// at a load average of 15, so more beside a full test run. A wait, not a measure of speed.
const LOAD_TIMEOUT_MS = 120_000;

async function modelFile(bytes: Uint8Array | string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'voxflow-turn-model-'));
  afterThisTest(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'model.onnx');
  await writeFile(path, bytes);
  return path;
}

async function load(path: string): Promise<EndOfTurnModel> {
  const model = await loadTurnModel(path);
  afterThisTest(() => model.close());
  return model;
}

function tone(seconds: number, amplitude: number): Int16Array {
  return Int16Array.from({ length: seconds * 16_000 }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / 16_000)));
}

describe('the end-of-turn model', () => {
  it('runs a Smart Turn v3-shaped model off the audio thread and answers a probability per question', async () => {
    const model = await load(await modelFile(tinySmartTurnModel()));
    // The tiny model is sigmoid(mean of the features): 2 s of tone in 8 s has a higher mean than silence.
    const [speech, silence] = await Promise.all([model.endOfTurnProbability(tone(2, 8_000)), model.endOfTurnProbability(new Int16Array(1600))]);
    expect(speech).toBeGreaterThan(0);
    expect(speech).toBeLessThan(1);
    // Silence's features are all the floor, (−10 + 4) / 4 = −1.5, whatever the scale: sigmoid(−1.5).
    expect(silence).toBeCloseTo(1 / (1 + Math.exp(1.5)), 5);
    expect(speech).toBeGreaterThan(silence);
    // Only the last 8 s count: 2 s of tone after 20 s of a steady level answers as its last 8 s do
    // (the first 8 s, a constant, would read as silence).
    const long = new Int16Array(22 * 16_000).fill(3_000);
    long.set(tone(8, 8_000).subarray(6 * 16_000), 20 * 16_000);
    const lastEight = long.subarray(14 * 16_000).slice();
    expect(await model.endOfTurnProbability(long)).toBeCloseTo(await model.endOfTurnProbability(lastEight), 6);

    // The work is the worker's: while five questions are answered, this thread (the one that
    // paces audio in the server) is mostly idle. Computed here, the features alone would keep it
    // busy throughout.
    const before = performance.eventLoopUtilization();
    for (let i = 0; i < 5; i++) await model.endOfTurnProbability(long);
    expect(performance.eventLoopUtilization(before).utilization).toBeLessThan(0.5);
  }, LOAD_TIMEOUT_MS);

  it('refuses a missing file, a file that is not ONNX, and a model of another shape, saying which and why', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'voxflow-turn-model-'));
    afterThisTest(() => rm(dir, { recursive: true, force: true }));
    const missing = join(dir, 'smart-turn-v3.onnx');
    await expect(loadTurnModel(missing)).rejects.toThrow(TurnModelError);
    await expect(loadTurnModel(missing)).rejects.toThrow(`cannot load the end-of-turn model at ${missing}: ENOENT`);

    const notOnnx = await modelFile('<html>404 Not Found</html>');
    await expect(loadTurnModel(notOnnx)).rejects.toThrow(new RegExp(`cannot load the end-of-turn model at ${notOnnx}: .*protobuf`));

    // Silero-like names: a real model, the wrong one.
    const otherShape = await modelFile(tinyOnnxModel({ inputs: [['input', [1, 576]]], outputs: [['output', [1, 576]]], nodes: [{ op: 'Sigmoid', inputs: ['input'], outputs: ['output'] }] }));
    await expect(loadTurnModel(otherShape)).rejects.toThrow(/expected one input input_features \[1, 80, 800\].*the model has input → output/);

    // The right name, the wrong shape: refused at load, by its run on silence, not on a call.
    const wrongFrames = await modelFile(
      tinyOnnxModel({ inputs: [['input_features', [1, 80, 3000]]], outputs: [['p', [1, 1, 1]]], nodes: [{ op: 'ReduceMean', inputs: ['input_features'], outputs: ['m'], ints: { axes: [1, 2] }, int: { keepdims: 1 } }, { op: 'Sigmoid', inputs: ['m'], outputs: ['p'] }] }),
    );
    await expect(loadTurnModel(wrongFrames)).rejects.toThrow(/cannot load the end-of-turn model at .*: .*(dimension|shape|Got invalid dimensions)/i);

    // Whose output is no probability: the identity of the features is not one.
    const notProbability = await modelFile(tinyOnnxModel({ inputs: [['input_features', [1, 80, 800]]], outputs: [['p', [1, 1, 1]]], nodes: [{ op: 'ReduceMax', inputs: ['input_features'], outputs: ['p'], ints: { axes: [1, 2] }, int: { keepdims: 1 } }] }));
    // Silence's features are all −1.5: below 0, not a probability.
    await expect(loadTurnModel(notProbability)).rejects.toThrow(/is not a probability \(got -1\.5\)/);
  }, LOAD_TIMEOUT_MS);

  it('rejects questions once closed, instead of leaving the caller waiting', async () => {
    const model = await loadTurnModel(await modelFile(tinySmartTurnModel()));
    await model.close();
    await expect(model.endOfTurnProbability(tone(1, 8_000))).rejects.toThrow(/stopped/);
  }, LOAD_TIMEOUT_MS);
});
