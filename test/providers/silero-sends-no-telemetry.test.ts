// The voice-activity model runs on onnxruntime, whose Linux build since 1.30 turns its own
// telemetry on by default: it reads the machine's CPU and OS names and a device id, queues events
// for Microsoft's collector, and leaves `.ses` and `mat-debug-<pid>.log` in the temp folder. The
// server turns it off; what an operator would notice is the files, so that is what is checked,
// in a process of its own (the library reads its settings once per process).
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LOAD_AND_DETECT = `
import { createSileroVad, releaseSileroModels } from './server/providers/turn/silero.ts';
const vad = createSileroVad();
await vad.load();
const detector = vad.createDetector();
console.log('probability', await detector.probability(new Float32Array(512)));
await releaseSileroModels();
`;

let dir = '';
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the voice-activity model', () => {
  it('loads and detects without writing telemetry files to the temp folder', { timeout: 60_000 }, async () => {
    dir = await mkdtemp(join(tmpdir(), 'voxflow-ort-'));
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: dir };
    delete env.ORT_DISABLE_TELEMETRY;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', LOAD_AND_DETECT], { cwd: ROOT, env });
    expect(stdout).toMatch(/probability/);
    // tsx-<uid> is tsx's compile cache, made by this test's own child process.
    expect((await readdir(dir)).filter((name) => !name.startsWith('tsx-'))).toEqual([]);
  });
});
