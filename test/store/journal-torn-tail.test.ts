import { appendFile, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JOURNAL_FILE } from '../../server/store/sqljs/database.ts';
import { StoreCorruptError } from '../../server/store/errors.ts';
import { encodeRecord, RECORD_HEADER_BYTES } from '../../server/store/sqljs/journal.ts';
import { openStore } from '../../server/store/sqljs/store.ts';
import { closeAfterTest, copyAsIfCrashed, tempDataDir } from './helpers.ts';

/** A crashed data dir whose journal holds an account and five flows, one record each. */
async function crashedDirWithFiveFlows() {
  const dataDir = await tempDataDir();
  const store = closeAfterTest(await openStore({ dataDir }));
  const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
  const flowIds: string[] = [];
  for (let i = 0; i < 5; i++) {
    flowIds.push((await store.flows.create({ accountId: account.id, name: `Flow ${i}`, yamlContent: 'id: f\n' })).id);
  }
  const crashedDir = await copyAsIfCrashed(dataDir);
  return { crashedDir, journal: join(crashedDir, JOURNAL_FILE), accountId: account.id, flowIds };
}

/** Byte offsets where each record of a journal starts. */
function recordOffsets(bytes: Buffer): number[] {
  const offsets: number[] = [];
  for (let offset = 0; offset < bytes.length; offset += RECORD_HEADER_BYTES + bytes.readUInt32LE(offset)) {
    offsets.push(offset);
  }
  return offsets;
}

function flowRecord(seq: number, accountId: string, id: string): Buffer {
  return encodeRecord({
    seq,
    statements: [
      {
        sql: 'INSERT INTO flows (id, account_id, name, yaml_content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
        params: [id, accountId, 'Appended', 'id: f\n', 1, 1],
      },
    ],
  });
}

describe('a journal whose tail was torn by a crash', () => {
  it('replays every record before appended garbage and drops the garbage', async () => {
    const { crashedDir, journal, accountId, flowIds } = await crashedDirWithFiveFlows();
    const garbage = Buffer.from('not a journal record, just noise from a crash');
    await appendFile(journal, garbage);

    const store = closeAfterTest(await openStore({ dataDir: crashedDir }));
    expect((await store.flows.list(accountId)).map((flow) => flow.id)).toEqual(flowIds);
    expect(store.db.recovery).toMatchObject({ replayedRecords: 6, droppedTailBytes: garbage.length, tail: 'torn' });
  });

  it('drops half a record at the end, and records written afterwards survive the next crash', async () => {
    const { crashedDir, journal, accountId, flowIds } = await crashedDirWithFiveFlows();
    const torn = flowRecord(7, accountId, 'torn-flow');
    await appendFile(journal, torn.subarray(0, Math.floor(torn.length / 2)));

    const store = closeAfterTest(await openStore({ dataDir: crashedDir }));
    expect(await store.flows.get(accountId, 'torn-flow')).toBeNull();
    expect(await store.flows.list(accountId)).toHaveLength(5);
    const later = await store.flows.create({ accountId, name: 'Later', yamlContent: 'id: later\n' });

    // Had the torn half stayed in the file, the new record would sit behind it and be lost.
    const again = closeAfterTest(await openStore({ dataDir: await copyAsIfCrashed(crashedDir) }));
    expect((await again.flows.list(accountId)).map((flow) => flow.id)).toEqual([...flowIds, later.id]);
    expect(again.db.recovery.droppedTailBytes).toBe(0);
  });

  it('drops the last record when a byte of its checksum is flipped', async () => {
    const { crashedDir, journal, accountId, flowIds } = await crashedDirWithFiveFlows();
    const bytes = await readFile(journal);
    const lastRecord = recordOffsets(bytes).at(-1)!;
    bytes[lastRecord + 4] = bytes[lastRecord + 4]! ^ 0xff;
    await writeFile(journal, bytes);

    const store = closeAfterTest(await openStore({ dataDir: crashedDir }));
    expect((await store.flows.list(accountId)).map((flow) => flow.id)).toEqual(flowIds.slice(0, 4));
    expect(store.db.recovery).toMatchObject({ tail: 'bad_checksum', droppedTailBytes: bytes.length - lastRecord });
    expect((await stat(journal)).size).toBe(lastRecord);
    await store.flows.create({ accountId, name: 'After the cut', yamlContent: 'id: f\n' });
    expect(await store.flows.list(accountId)).toHaveLength(5);
  });

  it('drops a zero-filled tail, which a crash can leave after the file grew', async () => {
    const { crashedDir, journal, accountId, flowIds } = await crashedDirWithFiveFlows();
    await appendFile(journal, Buffer.alloc(4096));

    const store = closeAfterTest(await openStore({ dataDir: crashedDir }));
    expect((await store.flows.list(accountId)).map((flow) => flow.id)).toEqual(flowIds);
    expect(store.db.recovery.droppedTailBytes).toBe(4096);
  });

  it('refuses to start on an intact record that skips a seq, instead of dropping writes', async () => {
    const { crashedDir, journal, accountId } = await crashedDirWithFiveFlows();
    await appendFile(journal, flowRecord(42, accountId, 'from-elsewhere'));

    await expect(openStore({ dataDir: crashedDir })).rejects.toBeInstanceOf(StoreCorruptError);
    // The refusal released the lock: the same dir opens once the journal is dealt with.
    await writeFile(journal, '');
    closeAfterTest(await openStore({ dataDir: crashedDir }));
  });
});
