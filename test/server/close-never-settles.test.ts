// SIGTERM on a server whose close never settles: it must not exit 0 as if all were flushed.
// The force-exit timer used to be unref()'d, so the emptied event loop ended the process
// silently with code 0, no final snapshot and the lock left behind.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SHUTDOWN_GRACE_MS } from '../../server/serve.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('a server whose close never settles', () => {
  it('exits 1 after the grace period and says so, instead of exiting 0', { timeout: SHUTDOWN_GRACE_MS + 30_000 }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'voxflow-hang-'));
    dirs.push(dataDir);
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/server/fixtures/close-never-settles.ts', '--serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`never served:\n${output}`)), 25_000);
        child.stdout.on('data', () => {
          if (output.includes('Voxflow is serving at')) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      child.kill('SIGTERM');
      expect(await exited).toBe(1);
      expect(output).toContain('shutdown took too long');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
