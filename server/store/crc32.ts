// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), the checksum zlib and PNG use, so a
// journal record can be checked with any standard tool. Node 20 has no crc32 in node:zlib
// (it arrived in 22.2), hence this table-driven version.

const TABLE = buildTable();

function buildTable(): Uint32Array {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

/** The CRC-32 of `bytes` as an unsigned 32-bit integer. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) {
    // Both indexes are in range by construction; the assertion only satisfies noUncheckedIndexedAccess.
    crc = TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}
