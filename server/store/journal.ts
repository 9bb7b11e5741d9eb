// The journal's on-disk format: a sequence of records, each
//   [u32 LE payload length][u32 LE CRC-32 of the payload][payload: UTF-8 JSON {seq, statements}]
// A crash can leave the last record torn (short, or with a checksum that does not match);
// everything before it is intact because records are only ever appended.

import { open } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { StoreCorruptError } from './errors.ts';

/** What a statement may bind: only values that survive a JSON round trip unchanged. */
export type SqlParam = string | number | null;
export type SqlParams = readonly SqlParam[] | Readonly<Record<string, SqlParam>>;

export interface RecordedStatement {
  sql: string;
  params: SqlParams;
}

export interface JournalRecord {
  seq: number;
  statements: RecordedStatement[];
}

export const RECORD_HEADER_BYTES = 8;
/** Far above any real record; a larger length field can only be a torn or garbage header. */
const MAX_PAYLOAD_BYTES = 256 * 1024 * 1024;

/**
 * One record, header and payload in a single buffer. The payload is encoded straight into it:
 * with Buffer.from and Buffer.concat, a 255 KiB flow upload (two statements carrying its text)
 * made two fresh 520 KiB buffers and a copy on the thread that paces audio, and under load
 * those allocations were the largest item of its write (issue 14).
 */
export function encodeRecord(record: JournalRecord): Buffer {
  const json = JSON.stringify(record);
  const length = Buffer.byteLength(json, 'utf8');
  const bytes = Buffer.allocUnsafe(RECORD_HEADER_BYTES + length);
  bytes.write(json, RECORD_HEADER_BYTES, 'utf8');
  bytes.writeUInt32LE(length, 0);
  bytes.writeUInt32LE(crc32(bytes.subarray(RECORD_HEADER_BYTES)), 4);
  return bytes;
}

export type JournalTail = 'clean' | 'torn' | 'bad_checksum';

export interface JournalScan {
  records: JournalRecord[];
  /** Bytes from the start up to the end of the last intact record. */
  validLength: number;
  /** Why scanning stopped before the end of the file, if it did. */
  tail: JournalTail;
}

/**
 * Reads intact records from the start of `bytes` and stops at the first torn or bad-checksum
 * one. A record whose checksum matches but whose payload is not a journal record is not a
 * torn write (a torn write cannot produce a matching CRC by accident in practice), so it is
 * reported as corruption instead of being dropped along with everything after it.
 */
export function scanJournal(bytes: Buffer, file: string): JournalScan {
  const records: JournalRecord[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    if (bytes.length - offset < RECORD_HEADER_BYTES) return { records, validLength: offset, tail: 'torn' };
    const length = bytes.readUInt32LE(offset);
    const expectedCrc = bytes.readUInt32LE(offset + 4);
    // A zero length is what a zero-filled tail looks like (the file grew but its blocks were
    // never written), and the CRC of an empty payload is 0, so it must not pass as a record.
    if (length === 0 || length > MAX_PAYLOAD_BYTES) return { records, validLength: offset, tail: 'torn' };
    const start = offset + RECORD_HEADER_BYTES;
    if (bytes.length - start < length) return { records, validLength: offset, tail: 'torn' };
    const payload = bytes.subarray(start, start + length);
    if (crc32(payload) !== expectedCrc) return { records, validLength: offset, tail: 'bad_checksum' };
    records.push(parsePayload(payload, file, offset));
    offset = start + length;
  }
  return { records, validLength: offset, tail: 'clean' };
}

function parsePayload(payload: Buffer, file: string, offset: number): JournalRecord {
  const fail = (detail: string, cause?: unknown): never => {
    throw new StoreCorruptError(file, `the record at byte ${offset} has a valid checksum but ${detail}`, { cause });
  };
  let value: unknown;
  try {
    value = JSON.parse(payload.toString('utf8'));
  } catch (error) {
    fail('is not JSON', error);
  }
  if (typeof value !== 'object' || value === null) return fail('is not an object');
  const { seq, statements } = value as { seq?: unknown; statements?: unknown };
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) return fail('has no valid seq');
  if (!Array.isArray(statements)) return fail('has no statement list');
  for (const statement of statements as unknown[]) {
    const { sql, params } = (statement ?? {}) as { sql?: unknown; params?: unknown };
    if (typeof sql !== 'string' || typeof params !== 'object' || params === null) {
      return fail('holds a malformed statement');
    }
  }
  return { seq, statements: statements as RecordedStatement[] };
}

/**
 * The journal's bytes, read up to the size `stat` reports. Reading by size rather than to EOF
 * means a journal that is not a regular file (a test points it at /dev/full to inject write
 * errors) reads as empty instead of forever.
 */
export async function readJournalFile(path: string): Promise<Buffer> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
    throw error;
  }
  try {
    const { size } = await handle.stat();
    const bytes = Buffer.alloc(size);
    let filled = 0;
    while (filled < size) {
      const { bytesRead } = await handle.read(bytes, filled, size - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return bytes.subarray(0, filled);
  } finally {
    await handle.close();
  }
}
