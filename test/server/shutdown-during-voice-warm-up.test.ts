// SIGTERM while the embedded voice and the VAD are still starting: the server closes cleanly and
// says nothing failed. Stopping their workers half-way used to log "the embedded voice could not
// warm up", which reads like a broken install.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnServer } from '../support/spawn-server.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('a server stopped while its voice starts', () => {
  it('exits 0 without reporting a warm-up or load failure', { timeout: 60_000 }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'voxflow-warmup-'));
    dirs.push(dataDir);
    const server = await spawnServer(['--data-dir', dataDir], {}, 45_000);
    try {
      // The warm-ups start 50 ms after listening: stop in the middle of them.
      await new Promise((resolve) => setTimeout(resolve, 150));
      server.child.kill('SIGTERM');
      expect((await server.exited).code).toBe(0);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
    expect(server.output()).not.toMatch(/could not (warm up|be loaded)/);
    expect(server.output()).not.toMatch(/"level":(50|60)/);
  });
});
