// The journal's on-disk format: a sequence of records, each
//   [u32 LE payload length][u32 LE CRC-32 of the payload][payload]
// where the payload is either UTF-8 JSON {seq, statements}, or, when a statement binds a long
// string (a flow's text), a record with blobs:
//   [0x00][u32 LE skeleton length][skeleton: the JSON with each long string as {"$blob": i}]
//   then per blob [u32 LE length][the string's UTF-8]
// JSON always starts with "{", so the first byte tells the two apart, and journals written
// before blobs existed replay as they are. Blobs are written as they are, not escaped into a
// JSON copy: a 255 KiB flow upload (two statements carrying its text) made a 520 KiB string
// and a buffer of it on the thread that paces audio, both garbage at once.
// A crash can leave the last record torn (short, or with a checksum that does not match);
// everything before it is intact because records are only ever appended.

import { open } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { StoreCorruptError } from '../errors.ts';

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
/** First payload byte of a record with blobs (a JSON payload starts with "{"). */
const BLOB_RECORD = 0x00;
/** Strings of at least this many characters are written as blobs. */
const BLOB_MIN_CHARS = 4096;
/** Far above any real record; a larger length field can only be a torn or garbage header. */
const MAX_PAYLOAD_BYTES = 256 * 1024 * 1024;

/**
 * One record, header and payload in a single buffer. The payload is encoded straight into it:
 * with Buffer.from and Buffer.concat, a 255 KiB flow upload (two statements carrying its text)
 * made two fresh 520 KiB buffers and a copy on the thread that paces audio, and under load
 * those allocations were the largest item of its write.
 */
export function encodeRecord(record: JournalRecord): Buffer {
  const blobs: string[] = [];
  const asBlob = (value: SqlParam): SqlParam | { $blob: number } => {
    if (typeof value !== 'string' || value.length < BLOB_MIN_CHARS) return value;
    blobs.push(value);
    return { $blob: blobs.length - 1 };
  };
  const statements = record.statements.map(({ sql, params }) => ({
    sql,
    params: Array.isArray(params) ? params.map(asBlob) : Object.fromEntries(Object.entries(params).map(([name, value]) => [name, asBlob(value)])),
  }));
  if (blobs.length === 0) {
    const json = JSON.stringify(record);
    const length = Buffer.byteLength(json, 'utf8');
    const bytes = Buffer.allocUnsafe(RECORD_HEADER_BYTES + length);
    bytes.write(json, RECORD_HEADER_BYTES, 'utf8');
    return sealed(bytes);
  }
  const skeleton = JSON.stringify({ seq: record.seq, statements });
  const skeletonLength = Buffer.byteLength(skeleton, 'utf8');
  const blobLengths = blobs.map((blob) => Buffer.byteLength(blob, 'utf8'));
  const payloadLength = 1 + 4 + skeletonLength + blobLengths.reduce((sum, length) => sum + 4 + length, 0);
  const bytes = Buffer.allocUnsafe(RECORD_HEADER_BYTES + payloadLength);
  let at = RECORD_HEADER_BYTES;
  bytes[at++] = BLOB_RECORD;
  at = bytes.writeUInt32LE(skeletonLength, at);
  at += bytes.write(skeleton, at, 'utf8');
  blobs.forEach((blob, i) => {
    at = bytes.writeUInt32LE(blobLengths[i]!, at);
    at += bytes.write(blob, at, 'utf8');
  });
  return sealed(bytes);
}

/** Fills in the header of a record whose payload is already in place after it. */
function sealed(bytes: Buffer): Buffer {
  bytes.writeUInt32LE(bytes.length - RECORD_HEADER_BYTES, 0);
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
  const blobs: string[] = [];
  const hasBlobs = payload[0] === BLOB_RECORD;
  try {
    if (hasBlobs) {
      const skeletonEnd = 5 + payload.readUInt32LE(1);
      value = JSON.parse(payload.toString('utf8', 5, skeletonEnd));
      for (let at = skeletonEnd; at < payload.length; ) {
        const end = at + 4 + payload.readUInt32LE(at);
        if (end > payload.length) return fail('has a blob that runs past its end');
        blobs.push(payload.toString('utf8', at + 4, end));
        at = end;
      }
    } else {
      value = JSON.parse(payload.toString('utf8'));
    }
  } catch (error) {
    if (error instanceof StoreCorruptError) throw error;
    return fail('is not JSON', error);
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
    if (hasBlobs) {
      const withBlobs = (param: unknown): unknown => {
        if (typeof param !== 'object' || param === null) return param;
        const index = (param as { $blob?: unknown }).$blob;
        return typeof index === 'number' && index >= 0 && index < blobs.length ? blobs[index] : fail('names a blob it does not have');
      };
      (statement as { params: unknown }).params = Array.isArray(params)
        ? params.map(withBlobs)
        : Object.fromEntries(Object.entries(params).map(([name, param]) => [name, withBlobs(param)]));
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
