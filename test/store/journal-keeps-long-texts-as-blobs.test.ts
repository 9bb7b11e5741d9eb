import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { JOURNAL_FILE } from '../../server/store/sqljs/database.ts';
import { StoreCorruptError } from '../../server/store/errors.ts';
import { RECORD_HEADER_BYTES, encodeRecord, scanJournal } from '../../server/store/sqljs/journal.ts';
import { openStore } from '../../server/store/sqljs/store.ts';
import { closeAfterTest, copyAsIfCrashed, tempDataDir } from './helpers.ts';

// A statement's long strings (a flow's text) go into the journal as raw UTF-8 blobs rather than
// escaped into the record's JSON (docs/benchmarks.md#what-the-figures-rest-on: less work and
// garbage on the thread that paces audio). The durability contract is the same: every acknowledged
// write replays exactly, a torn tail is dropped, a record whose checksum matches but whose content
// is wrong is corruption.

/** Every kind of character JSON escapes or UTF-8 spells in several bytes, over 300 KiB. */
const awkward = (tag: string) => `id: ${tag}\n# "quotes", back\\slashes, tabs\t, é, 中文, 🎙️, \u0000 and \u2028\n${'line "x" \\ é 🎧\n'.repeat(20_000)}`;

describe('the journal with long texts', () => {
  it('replays a flow whose long text has every awkward character, exactly, after a crash', async () => {
    const dataDir = await tempDataDir();
    const store = closeAfterTest(await openStore({ dataDir }));
    const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    const texts = [awkward('a'), awkward('b')];
    const ids = [];
    for (const text of texts) ids.push((await store.flows.create({ accountId: account.id, name: 'Awkward', yamlContent: text })).id);
    const renamed = await store.flows.update(account.id, ids[0]!, { name: 'Renamed "é"', yamlContent: `${texts[0]}# edited\n` });
    expect(renamed?.name).toBe('Renamed "é"');

    const journal = await readFile(join(dataDir, JOURNAL_FILE));
    // The account's record is JSON; the first flow's has blobs.
    const second = RECORD_HEADER_BYTES + journal.readUInt32LE(0);
    expect([journal[RECORD_HEADER_BYTES], journal[second + RECORD_HEADER_BYTES]]).toEqual([0x7b, 0x00]);
    const afterCrash = closeAfterTest(await openStore({ dataDir: await copyAsIfCrashed(dataDir) }));
    expect(afterCrash.db.recovery.replayedRecords).toBe(4);
    expect(await afterCrash.flows.get(account.id, ids[0]!)).toMatchObject({ name: 'Renamed "é"', yamlContent: `${texts[0]}# edited\n` });
    expect((await afterCrash.flows.get(account.id, ids[1]!))?.yamlContent).toBe(texts[1]);
  });

  it('drops a record with blobs torn anywhere at the end, and keeps every record before it', async () => {
    const record = encodeRecord({ seq: 9, statements: [{ sql: 'INSERT INTO t VALUES (?, ?)', params: ['short', awkward('torn')] }] });
    const before = encodeRecord({ seq: 8, statements: [{ sql: 'INSERT INTO t VALUES (?)', params: { text: awkward('kept') } }] });
    for (const cut of [RECORD_HEADER_BYTES + 3, Math.floor(record.length / 2), record.length - 1]) {
      const scan = scanJournal(Buffer.concat([before, record.subarray(0, cut)]), 'voxflow.journal');
      expect(scan.tail).toBe('torn');
      expect(scan.validLength).toBe(before.length);
      expect(scan.records).toEqual([{ seq: 8, statements: [{ sql: 'INSERT INTO t VALUES (?)', params: { text: awkward('kept') } }] }]);
    }
    const flipped = Buffer.from(record);
    flipped[flipped.length - 5]! ^= 0xff;
    expect(scanJournal(flipped, 'voxflow.journal').tail).toBe('bad_checksum');
  });

  it('refuses, as corruption, a record whose checksum matches but that names a blob it does not have', async () => {
    const good = encodeRecord({ seq: 1, statements: [{ sql: 'INSERT INTO t VALUES (?)', params: [awkward('x')] }] });
    const payload = Buffer.from(good.subarray(RECORD_HEADER_BYTES).toString('latin1').replace('{"$blob":0}', '{"$blob":7}'), 'latin1');
    const header = Buffer.alloc(RECORD_HEADER_BYTES);
    header.writeUInt32LE(payload.length, 0);
    header.writeUInt32LE(crc32(payload), 4);
    expect(() => scanJournal(Buffer.concat([header, payload]), 'voxflow.journal')).toThrow(StoreCorruptError);

    const dataDir = await tempDataDir();
    const store = closeAfterTest(await openStore({ dataDir }));
    await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    const crashed = await copyAsIfCrashed(dataDir);
    await appendFile(join(crashed, JOURNAL_FILE), Buffer.concat([header, payload]));
    await expect(openStore({ dataDir: crashed })).rejects.toThrow(StoreCorruptError);
  });
});
