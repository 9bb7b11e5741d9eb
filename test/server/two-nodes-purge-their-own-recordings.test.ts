// Retention with several nodes on PostgreSQL (docs/hosting.md#several-nodes-on-postgresql): each
// node keeps the recordings of the calls it carried on its own disk, while any one node purges the
// sessions' rows. Past retention, neither node's folder may keep a recording, whichever node
// purged the rows; a younger recording stays where it is.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordingsDir } from '../../server/outcomes/retention.ts';
import { openPostgresStore } from '../../server/store/postgres/store.ts';
import { afterThisTest } from '../support/after-this-test.ts';
import { sharedPostgresForThisFile } from '../support/shared-postgres.ts';
import { startTestServer } from '../support/server.ts';

const cluster = sharedPostgresForThisFile();
const DAY = 86_400;

/** A WAV-sized stand-in: only where it is and when it was last written matter to retention. */
async function recordingOn(dataDir: string, file: string, lastWrittenSecs: number): Promise<void> {
  await mkdir(recordingsDir(dataDir), { recursive: true, mode: 0o700 });
  const path = join(recordingsDir(dataDir), file);
  await writeFile(path, Buffer.alloc(4096));
  await utimes(path, lastWrittenSecs, lastWrittenSecs);
}

describe('retention on two nodes with a recordings folder each', () => {
  it('after the purge neither node keeps a recording past retention, and both keep the young ones', { timeout: 90_000 }, async () => {
    const databaseUrl = await cluster.createDatabase('voxflow_purge_nodes', { migrated: true });
    const keys = { secretKey: randomBytes(32).toString('base64'), jwtSecret: randomBytes(48).toString('base64') };
    const folders = { a: await mkdtemp(join(tmpdir(), 'voxflow-node-a-')), b: await mkdtemp(join(tmpdir(), 'voxflow-node-b-')) };
    afterThisTest(async () => {
      await rm(folders.a, { recursive: true, force: true });
      await rm(folders.b, { recursive: true, force: true });
    });

    // Forty days ago each node carried two recorded calls; today each carries one more.
    const now = Date.now() / 1000;
    const clock = { now: now - 40 * DAY };
    const setup = await openPostgresStore({ url: databaseUrl, poolSize: 2, now: () => clock.now });
    const sessions: Record<'a' | 'b', { old: string[]; young: string }> = { a: { old: [], young: '' }, b: { old: [], young: '' } };
    try {
      const account = await setup.accounts.create({ email: 'purge@example.com', passwordHash: 'x' });
      const call = async (node: 'a' | 'b', young: boolean) => {
        clock.now = young ? now - 60 : now - 40 * DAY;
        const session = await setup.sessions.createConnected({ accountId: account.id, flowId: null, transport: 'websocket', mode: 'assistant', context: {}, metadata: {}, record: true });
        await setup.sessions.setRecordingFile(session.id, `${session.id}.wav`);
        await setup.sessions.end(session.id, { endedAt: clock.now + 30, reason: 'client_ended', creditsChargedCents: 0, durationSecs: 30 });
        await recordingOn(folders[node], `${session.id}.wav`, clock.now + 30);
        if (young) sessions[node].young = session.id;
        else sessions[node].old.push(session.id);
      };
      for (const node of ['a', 'b'] as const) {
        await call(node, false);
        await call(node, false);
        await call(node, true);
      }
    } finally {
      await setup.close();
    }

    // Both nodes start at once, as a fleet does, and each runs its retention pass at start: one
    // of them takes every expired row (the store hands a row to one purger only).
    const [a, b] = await Promise.all([folders.a, folders.b].map((dataDir) => startTestServer({ databaseUrl, ...keys, dataDir })));
    afterThisTest(() => a!.close());
    afterThisTest(() => b!.close());

    const expiredLeft = async () => {
      const left: string[] = [];
      for (const node of ['a', 'b'] as const) {
        const names = await readdir(recordingsDir(folders[node]));
        for (const id of sessions[node].old) if (names.includes(`${id}.wav`)) left.push(`node ${node}: ${id}.wav`);
      }
      return left;
    };
    await expect.poll(expiredLeft, { timeout: 30_000, interval: 200 }).toEqual([]);

    for (const node of ['a', 'b'] as const) {
      expect(existsSync(join(recordingsDir(folders[node]), `${sessions[node].young}.wav`)), `node ${node}'s young recording`).toBe(true);
    }
    // The rows say the same: the old sessions' recordings are gone, the young ones' are not.
    const store = a!.app.services.store;
    for (const node of ['a', 'b'] as const) {
      for (const id of sessions[node].old) expect((await store.sessions.findById(id))!.recordingFile).toBeNull();
      expect((await store.sessions.findById(sessions[node].young))!.recordingFile).toBe(`${sessions[node].young}.wav`);
    }
  });
});
