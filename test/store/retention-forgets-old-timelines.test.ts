// Retention: past --retention-days a session's timeline and recording are forgotten, its row
// (times, cost, end reason) stays; younger sessions keep everything.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { purgeExpired, recordingsDir } from '../../server/outcomes/retention.ts';
import { openStore } from '../../server/store/store.ts';
import { closeAfterTest, tempDataDir } from './helpers.ts';

test('a session older than the retention loses its timeline and recording file, and keeps its row', async () => {
  const dataDir = await tempDataDir();
  const store = closeAfterTest(await openStore({ dataDir, fsync: false }));
  const account = await store.accounts.create({ email: 'keep@example.com', passwordHash: 'x' });
  const session = await store.sessions.createConnected({ accountId: account.id, flowId: null, transport: 'websocket', mode: 'assistant', context: {}, metadata: {} });
  await store.timelines.append(session.id, [{ seq: 1, at: session.createdAt, type: 'session_ended', data: '{"type":"session_ended"}' }], { events: 1, bytes: 24, dropped: 0 });
  await mkdir(recordingsDir(dataDir), { recursive: true });
  await writeFile(join(recordingsDir(dataDir), `${session.id}.wav`), 'RIFF');
  await store.sessions.setRecordingFile(session.id, `${session.id}.wav`);

  // 29 days later: kept.
  expect(await purgeExpired(store, dataDir, 30, session.createdAt + 29 * 86_400)).toBe(0);
  expect(store.timelines.page(session.id, 0, 10)).toHaveLength(1);
  expect(existsSync(join(recordingsDir(dataDir), `${session.id}.wav`))).toBe(true);

  // 31 days later: forgotten, the row stays.
  expect(await purgeExpired(store, dataDir, 30, session.createdAt + 31 * 86_400)).toBe(1);
  expect(store.timelines.page(session.id, 0, 10)).toEqual([]);
  expect(existsSync(join(recordingsDir(dataDir), `${session.id}.wav`))).toBe(false);
  const row = store.sessions.findById(session.id)!;
  expect(row).toMatchObject({ id: session.id, recordingFile: null, timeline: { events: 0, bytes: 0, dropped: 0 } });
  // Nothing left to purge.
  expect(await purgeExpired(store, dataDir, 30, session.createdAt + 31 * 86_400)).toBe(0);
});
