// SIGTERM while the embedded voice and the VAD are still starting: the server closes cleanly and
// says nothing failed. Stopping their workers half-way used to log "the embedded voice could not
// warm up", which reads like a broken install.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('a server stopped while its voice starts', () => {
  it('exits 0 without reporting a warm-up or load failure', { timeout: 60_000 }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'voxflow-warmup-'));
    dirs.push(dataDir);
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--serve', '--port', '0', '--data-dir', dataDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`never served:\n${output}`)), 45_000);
        child.stdout.on('data', () => {
          if (output.includes('Voxflow is serving at')) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      // The warm-ups start 50 ms after listening: stop in the middle of them.
      await new Promise((resolve) => setTimeout(resolve, 150));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    expect(output).not.toMatch(/could not (warm up|be loaded)/);
    expect(output).not.toMatch(/"level":(50|60)/);
  });
});
