// Stopping the voice-activity model or the end-of-turn model while their runs are in flight (a
// server closing mid-call, `voxflow test` ending as its last call's frames are answered) must not
// take the process down. Terminating their worker thread during an onnxruntime run aborted the
// whole process ("terminate called after throwing an instance of 'Napi::Error'"): seen once in a
// `voxflow test --mode audio` run beside a second test run, then every time by the first check here
// (the voice-activity model, whose batched runs keep its worker in onnxruntime most of the time).
// The end-of-turn model's worker stops the same way; its tiny test model runs too briefly for a
// terminate to land inside a run, so its check asks what the change must keep: every question
// settles and the process exits cleanly. Each check runs in a process of its own, since an abort
// would end the test's own worker with it.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { afterThisTest } from '../support/after-this-test.ts';
import { tinySmartTurnModel } from '../support/tiny-onnx.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Runs `script` (an ES module, from the repository's root) in a process of its own. */
function run(script: string, args: string[] = []): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, ...args], { cwd: ROOT, timeout: 150_000 }, (error, stdout, stderr) => {
      const failed = error as (Error & { code?: number | string; signal?: string }) | null;
      resolve({ code: typeof failed?.code === 'number' ? failed.code : failed ? null : 0, signal: failed?.signal ?? null, stdout, stderr });
    });
  });
}

// Twenty callers' frames in flight, then the shared worker stopped a few ms later, ten times.
const SILERO_STOPPED_MID_RUN = `
import { createSileroVad, releaseSileroModels } from './server/providers/turn/silero.ts';
let answered = 0, refused = 0;
for (let round = 0; round < 10; round++) {
  const vad = createSileroVad();
  await vad.load();
  const detectors = Array.from({ length: 20 }, () => vad.createDetector());
  const frame = Float32Array.from({ length: 512 }, (_, i) => Math.sin(i / 5) * 0.1);
  const frames = [];
  for (let i = 0; i < 40; i++) for (const detector of detectors) frames.push(detector.probability(frame).then(() => answered++, () => refused++));
  await new Promise((resolve) => setTimeout(resolve, round * 3));
  await releaseSileroModels();
  await Promise.all(frames);
}
console.log(JSON.stringify({ answered, refused }));
`;

// Questions in flight to the end-of-turn model, then the model closed after waits from none to
// 600 ms: the short ones close it before any answer, the long ones after some are answered and
// while others run (thirty rounds of 0-29 ms all closed it before the first answer, and loading
// the model thirty times cost 8.7 s of CPU against 2.5 s for these eight).
const CLOSE_AFTER_MS = [0, 2, 5, 15, 40, 100, 250, 600];
const TURN_MODEL_CLOSED_MID_RUN = `
import { loadTurnModel } from './server/engine/turn-model.ts';
const path = process.argv[process.argv.length - 1];
let answered = 0, refused = 0;
for (const wait of ${JSON.stringify(CLOSE_AFTER_MS)}) {
  const model = await loadTurnModel(path);
  const speech = Int16Array.from({ length: 16000 * 4 }, (_, i) => Math.round(8000 * Math.sin(i / 7)));
  const questions = Array.from({ length: 8 }, () => model.endOfTurnProbability(speech).then(() => answered++, () => refused++));
  await new Promise((resolve) => setTimeout(resolve, wait));
  await model.close();
  await Promise.all(questions);
}
console.log(JSON.stringify({ answered, refused }));
`;

describe('stopping the turn-taking models while they run', () => {
  it('stops the voice-activity model with frames in flight, and the process lives on', { timeout: 180_000 }, async () => {
    const result = await run(SILERO_STOPPED_MID_RUN);
    expect(result.stderr).not.toContain('Napi::Error');
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 0, signal: null });
    // Every frame was answered or refused (the worker was stopped): none left hanging.
    const { answered, refused } = JSON.parse(result.stdout) as { answered: number; refused: number };
    expect(answered + refused).toBe(10 * 20 * 40);
  });

  it('closes the end-of-turn model with questions in flight, and the process lives on', { timeout: 180_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'voxflow-turn-model-'));
    afterThisTest(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'model.onnx');
    await writeFile(path, tinySmartTurnModel());
    const result = await run(TURN_MODEL_CLOSED_MID_RUN, [path]);
    expect(result.stderr).not.toContain('Napi::Error');
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 0, signal: null });
    const { answered, refused } = JSON.parse(result.stdout) as { answered: number; refused: number };
    expect(answered + refused).toBe(CLOSE_AFTER_MS.length * 8);
  });
});
