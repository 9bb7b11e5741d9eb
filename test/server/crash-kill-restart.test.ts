// Kills the real server with SIGKILL at random moments while a client writes, restarts it on
// the same data dir, and checks that every write it had acknowledged is there.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServer, type ServerProcess } from '../support/spawn-server.ts';
import { GUESSING_GAME_YAML } from '../support/server.ts';

// One kill in `npm test`; the soak bench (`npm run bench -- soaks`) raises it for a crash loop.
const ROUNDS = Number(process.env.VOXFLOW_CRASH_ROUNDS ?? 1);
const WRITERS = 4;

async function json(url: string, init: RequestInit = {}) {
  const response = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...init.headers } });
  return { status: response.status, body: (await response.json().catch(() => null)) as any };
}

describe('the server killed while writing', () => {
  let server: ServerProcess | null = null;
  let dataDir = '';
  afterEach(async () => {
    server?.child.kill('SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(`keeps every acknowledged write across ${ROUNDS} SIGKILLs at random moments`, { timeout: 30_000 + ROUNDS * 40_000 }, async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'voxflow-crash-'));
    server = await spawnServer(['--data-dir', dataDir]);
    const signup = await json(`${server.url}/auth/signup`, { method: 'POST', body: JSON.stringify({ email: 'crash@example.com', password: 'long enough password' }) });
    expect(signup.status).toBe(200);
    const key = await json(`${server.url}/auth/api-keys?label=crash`, { method: 'POST', headers: { authorization: `Bearer ${signup.body.access_token}` } });
    expect(key.status).toBe(201);
    const headers = { 'x-service-key': key.body.key as string };

    const acknowledged = new Map<string, string>();
    for (let round = 0; round < ROUNDS; round++) {
      const url = server.url;
      let stop = false;
      const acknowledgedBefore = acknowledged.size;
      const writer = async (w: number) => {
        for (let i = 0; !stop; i++) {
          const name = `round ${round} writer ${w} #${i}`;
          try {
            const created = await json(`${url}/v1/flows`, { method: 'POST', headers, body: JSON.stringify({ name, yaml_content: GUESSING_GAME_YAML }) });
            if (created.status === 201) acknowledged.set(created.body.id, name);
          } catch {
            return; // the connection died with the server: that write was never acknowledged
          }
        }
      };
      const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
      // The kill comes at a random moment once writes are flowing: a freshly started server
      // warms up its voice models first, and on a busy machine a fixed delay could end a round
      // before any write was acknowledged, testing nothing.
      while (acknowledged.size < acknowledgedBefore + 6) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, Math.random() * 600));
      server.child.kill('SIGKILL');
      await server.exited;
      stop = true;
      await Promise.all(writers);

      // The restart itself checks the snapshot's integrity and replays the journal.
      server = await spawnServer(['--data-dir', dataDir]);
      const listed = await json(`${server.url}/v1/flows`, { headers });
      expect(listed.status).toBe(200);
      const names = new Map((listed.body as Array<{ id: string; name: string }>).map((f) => [f.id, f.name]));
      for (const [id, name] of acknowledged) expect(names.get(id), `acknowledged flow ${id} lost in round ${round}`).toBe(name);
    }
    expect(acknowledged.size).toBeGreaterThan(ROUNDS * 5);

    // Still a working server after all that: the API key and the flows' content are intact.
    const [anyId] = acknowledged.keys();
    const one = await json(`${server.url}/v1/flows/${anyId}`, { headers });
    expect(one.body.yaml_content).toBe(GUESSING_GAME_YAML);
  });
});
