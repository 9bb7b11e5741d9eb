// `--turn-model PATH` as a host runs it (the bundle `npm run serve` runs): a Smart Turn v3-shaped
// model loads beside the bundle's own worker file and the server serves; a file it cannot use
// stops the start with exit code 2 and a line naming the file and the reason, before it listens.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { afterThisTest } from '../support/after-this-test.ts';
import { serverBundle } from '../support/server-bundle.ts';
import { spawnServer } from '../support/spawn-server.ts';
import { tinySmartTurnModel } from '../support/tiny-onnx.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'voxflow-turn-flag-'));
  afterThisTest(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('the server starts with a usable end-of-turn model and answers as usual', { timeout: 120_000 }, async () => {
  const dir = await tempDir();
  await writeFile(join(dir, 'smart-turn.onnx'), tinySmartTurnModel());
  const server = await spawnServer(['--data-dir', join(dir, 'data'), '--turn-model', join(dir, 'smart-turn.onnx')], {}, 60_000, [serverBundle()]);
  afterThisTest(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  });
  expect((await fetch(`${server.url}/health`)).status).toBe(200);
  server.child.kill('SIGTERM');
  expect(await server.exited).toEqual({ code: 0, signal: null });
});

test('a model file it cannot use stops the start with exit code 2, naming the file and why', { timeout: 120_000 }, async () => {
  const dir = await tempDir();
  const model = join(dir, 'smart-turn-v3.onnx');
  await writeFile(model, '<html>Not Found</html>');
  for (const [path, why] of [
    [model, /protobuf parsing failed/],
    [join(dir, 'missing.onnx'), /ENOENT/],
  ] as const) {
    const child = spawn(process.execPath, [serverBundle(), '--serve', '--port', '0', '--data-dir', join(dir, 'data'), '--turn-model', path], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    afterThisTest(() => void child.kill('SIGKILL'));
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code, output).toBe(2);
    expect(output).toContain(`cannot load the end-of-turn model at ${path}: `);
    expect(output).toMatch(why);
    expect(output).not.toContain('Voxflow is serving');
    // One line, not a stack trace.
    expect(output.trim().split('\n')).toHaveLength(1);
  }
});
