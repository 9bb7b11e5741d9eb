// Draws the app icon (resources/icons/icon.png, 512×512) from the same shapes as icon.svg: a
// rounded square in an indigo-to-violet gradient with five white voice bars. electron-builder
// makes the .icns and .ico from the PNG. Plain Node (zlib), no image packages; run it again
// after changing a shape in both places: `node scripts/make-icon.mjs`.
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SIZE = 512;
const CORNER = 112;
const TOP = [0x31, 0x2e, 0x81];
const BOTTOM = [0x6d, 0x28, 0xd9];
/** Voice bars: centre x, height; all 28 wide with round ends, centred on y = 256. */
const BARS = [
  [156, 120],
  [206, 220],
  [256, 300],
  [306, 220],
  [356, 120],
];
const BAR_WIDTH = 28;

/** Signed distance to a rounded rectangle centred at (cx, cy) with half-sizes (hw, hh). */
function roundedRectDistance(x, y, cx, cy, hw, hh, r) {
  const qx = Math.abs(x - cx) - (hw - r);
  const qy = Math.abs(y - cy) - (hh - r);
  const outside = Math.hypot(Math.max(qx, 0), Math.max(qy, 0));
  return outside + Math.min(Math.max(qx, qy), 0) - r;
}

/** Pixel coverage from a signed distance: one pixel of anti-aliasing along the edge. */
const coverage = (distance) => Math.min(1, Math.max(0, 0.5 - distance));

const pixels = Buffer.alloc(SIZE * (SIZE * 4 + 1));
for (let y = 0; y < SIZE; y++) {
  const row = y * (SIZE * 4 + 1);
  pixels[row] = 0; // PNG filter: none
  const t = y / (SIZE - 1);
  const background = TOP.map((c, i) => c + (BOTTOM[i] - c) * t);
  for (let x = 0; x < SIZE; x++) {
    const px = x + 0.5;
    const py = y + 0.5;
    const shape = coverage(roundedRectDistance(px, py, 256, 256, 256, 256, CORNER));
    let bar = 0;
    for (const [cx, height] of BARS) {
      bar = Math.max(bar, coverage(roundedRectDistance(px, py, cx, 256, BAR_WIDTH / 2, height / 2, BAR_WIDTH / 2)));
    }
    const rgb = background.map((c) => c + (255 - c) * bar);
    const at = row + 1 + x * 4;
    pixels[at] = Math.round(rgb[0]);
    pixels[at + 1] = Math.round(rgb[1]);
    pixels[at + 2] = Math.round(rgb[2]);
    pixels[at + 3] = Math.round(255 * shape);
  }
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes) {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

const header = Buffer.alloc(13);
header.writeUInt32BE(SIZE, 0);
header.writeUInt32BE(SIZE, 4);
header[8] = 8; // bits per channel
header[9] = 6; // RGBA
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk('IHDR', header),
  chunk('IDAT', deflateSync(pixels, { level: 9 })),
  chunk('IEND', Buffer.alloc(0)),
]);
const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'resources', 'icons', 'icon.png');
writeFileSync(out, png);
console.log(`wrote ${out} (${png.length} bytes)`);
