// Retention, against both stores (both-stores.ts): past --retention-days a session's
// timeline and recording are forgotten, its row (times, cost, end reason) stays; younger sessions
// keep everything. Recordings are files in the node's data folder whichever store holds the rows.
import { existsSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { purgeExpired, purgeExpiredWithReport, recordingsDir } from '../../../server/outcomes/retention.ts';
import { describeEachStore } from './both-stores.ts';
import { tempDataDir } from '../helpers.ts';

describeEachStore('retention', (open) => {
  it('a session older than the retention loses its timeline and recording file, and keeps its row', async () => {
    const dataDir = await tempDataDir();
    const clock = { now: 1_700_000_000 };
    const { store } = await open({ now: () => clock.now });
    const account = await store.accounts.create({ email: 'keep@example.com', passwordHash: 'x' });
    const session = await store.sessions.createConnected({ accountId: account.id, flowId: null, transport: 'websocket', mode: 'assistant', context: {}, metadata: {} });
    clock.now += 2 * 86_400;
    const young = await store.sessions.createConnected({ accountId: account.id, flowId: null, transport: 'websocket', mode: 'assistant', context: {}, metadata: {} });
    const events = [
      { seq: 1, at: session.createdAt, type: 'session_started', data: '{"type":"session_started"}' },
      { seq: 2, at: session.createdAt + 1, type: 'session_ended', data: '{"type":"session_ended"}' },
    ];
    await store.timelines.append(session.id, events, { events: 2, bytes: 50, dropped: 0 });
    await store.timelines.append(young.id, events.slice(0, 1), { events: 1, bytes: 26, dropped: 0 });
    await mkdir(recordingsDir(dataDir), { recursive: true });
    await writeFile(join(recordingsDir(dataDir), `${session.id}.wav`), 'RIFF');
    await store.sessions.setRecordingFile(session.id, `${session.id}.wav`);
    // A timeline reads back in order, in pages after a given event.
    expect(await store.timelines.page(session.id, 0, 10)).toEqual(events);
    expect(await store.timelines.page(session.id, 1, 10)).toEqual(events.slice(1));
    expect(await store.timelines.page(session.id, 0, 1)).toEqual(events.slice(0, 1));

    // 29 days later: kept.
    expect(await purgeExpired(store, dataDir, 30, session.createdAt + 29 * 86_400)).toBe(0);
    expect(await store.timelines.page(session.id, 0, 10)).toHaveLength(2);
    expect(existsSync(join(recordingsDir(dataDir), `${session.id}.wav`))).toBe(true);

    // 31 days later: forgotten, the row stays; the session made two days later keeps its timeline.
    const cutoffNow = session.createdAt + 31 * 86_400;
    expect(await purgeExpired(store, dataDir, 30, cutoffNow)).toBe(1);
    expect(await store.timelines.page(young.id, 0, 10)).toEqual(events.slice(0, 1));
    expect(await store.timelines.page(session.id, 0, 10)).toEqual([]);
    expect(existsSync(join(recordingsDir(dataDir), `${session.id}.wav`))).toBe(false);
    const row = (await store.sessions.findById(session.id))!;
    expect(row).toMatchObject({ id: session.id, recordingFile: null, timeline: { events: 0, bytes: 0, dropped: 0 } });
    // Nothing left to purge.
    expect(await purgeExpired(store, dataDir, 30, cutoffNow)).toBe(0);
  });

  it("deletes the node's own recordings last written before the cutoff, whoever purged their rows, and names what it could not delete", async () => {
    const dataDir = await tempDataDir();
    const now = Date.now() / 1000;
    const clock = { now: now - 40 * 86_400 };
    const { store } = await open({ now: () => clock.now });
    const account = await store.accounts.create({ email: 'sweep@example.com', passwordHash: 'x' });
    const old = await store.sessions.createConnected({ accountId: account.id, flowId: null, transport: 'websocket', mode: 'assistant', context: {}, metadata: {}, record: true });
    const dir = recordingsDir(dataDir);
    await mkdir(dir, { recursive: true });
    // The old session's name is taken by a folder, which no unlink removes: a file it cannot delete.
    await mkdir(join(dir, `${old.id}.wav`));
    await store.sessions.setRecordingFile(old.id, `${old.id}.wav`);
    const at = async (name: string, secs: number) => {
      await writeFile(join(dir, name), 'RIFF');
      await utimes(join(dir, name), secs, secs);
    };
    // A recording whose row another node purged long ago, one of a call today, and not a recording.
    await at('purged-elsewhere.wav', now - 40 * 86_400);
    await at('today.wav', now - 60);
    await at('notes.txt', now - 40 * 86_400);

    const report = await purgeExpiredWithReport(store, dataDir, 30, now);
    expect(report.sessions).toBe(1);
    expect(report.files).toBe(1);
    expect(report.undeleted).toEqual([{ file: `${old.id}.wav`, reason: expect.any(String) }]);
    expect(existsSync(join(dir, 'purged-elsewhere.wav'))).toBe(false);
    expect(existsSync(join(dir, 'today.wav'))).toBe(true);
    expect(existsSync(join(dir, 'notes.txt'))).toBe(true);
    expect((await store.sessions.findById(old.id))!.recordingFile).toBeNull();
  });
});
