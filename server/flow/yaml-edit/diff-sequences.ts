// The changes between two sequences (lines as ids, or characters) as hunks, bounded so that a
// diff never costs more than a fixed number of edits per gap between anchors.

/** Base range [aStart, aEnd) became [bStart, bEnd) of the other side. */
export interface Hunk {
  aStart: number;
  aEnd: number;
  bStart: number;
  bEnd: number;
}

/**
 * The changes from a to b as hunks, in order. Unique common elements anchor the alignment
 * (patience) so that documents with many layout differences stay cheap; between anchors a
 * Myers diff is run, and a gap it cannot solve within maxEdits becomes one hunk, which only
 * makes the merge coarser, never wrong.
 */
export function diff(a: Int32Array, b: Int32Array, anchored: boolean, maxEdits: number): Hunk[] {
  const runs: Array<[number, number, number]> = []; // [aIndex, bIndex, length] of equal runs
  let lo = 0;
  while (lo < a.length && lo < b.length && a[lo] === b[lo]) lo++;
  let aHi = a.length;
  let bHi = b.length;
  while (aHi > lo && bHi > lo && a[aHi - 1] === b[bHi - 1]) {
    aHi--;
    bHi--;
  }
  if (lo > 0) runs.push([0, 0, lo]);
  const anchors = anchored ? uniqueAnchors(a, lo, aHi, b, lo, bHi) : [];
  let pa = lo;
  let pb = lo;
  for (const [ai, bi] of [...anchors, [aHi, bHi] as [number, number]]) {
    myers(a, pa, ai, b, pb, bi, maxEdits, runs);
    if (ai < aHi) runs.push([ai, bi, 1]);
    pa = ai + 1;
    pb = bi + 1;
  }
  if (aHi < a.length) runs.push([aHi, bHi, a.length - aHi]);

  const hunks: Hunk[] = [];
  let x = 0;
  let y = 0;
  for (const [ra, rb, length] of [...runs, [a.length, b.length, 0] as [number, number, number]]) {
    if (ra > x || rb > y) hunks.push({ aStart: x, aEnd: ra, bStart: y, bEnd: rb });
    x = ra + length;
    y = rb + length;
  }
  return hunks;
}

function uniqueAnchors(
  a: Int32Array,
  aLo: number,
  aHi: number,
  b: Int32Array,
  bLo: number,
  bHi: number,
): Array<[number, number]> {
  // Per element: count in a, count in b, last index in b.
  const stats = new Map<number, [number, number, number]>();
  for (let i = aLo; i < aHi; i++) {
    const s = stats.get(a[i] as number);
    if (s) s[0]++;
    else stats.set(a[i] as number, [1, 0, -1]);
  }
  for (let j = bLo; j < bHi; j++) {
    const s = stats.get(b[j] as number);
    if (s) {
      s[1]++;
      s[2] = j;
    }
  }
  const pairs: Array<[number, number]> = [];
  for (let i = aLo; i < aHi; i++) {
    const s = stats.get(a[i] as number) as [number, number, number];
    if (s[0] === 1 && s[1] === 1) pairs.push([i, s[2]]);
  }
  // Longest increasing subsequence on the b index (patience sorting).
  const tails: number[] = [];
  const previous = new Int32Array(pairs.length).fill(-1);
  for (let p = 0; p < pairs.length; p++) {
    const bj = (pairs[p] as [number, number])[1];
    let low = 0;
    let high = tails.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((pairs[tails[mid] as number] as [number, number])[1] < bj) low = mid + 1;
      else high = mid;
    }
    if (low > 0) previous[p] = tails[low - 1] as number;
    tails[low] = p;
  }
  const result: Array<[number, number]> = [];
  for (let p = tails.length > 0 ? (tails[tails.length - 1] as number) : -1; p !== -1; p = previous[p] as number) {
    result.push(pairs[p] as [number, number]);
  }
  return result.reverse();
}

/** Appends the equal runs of a[aLo, aHi) and b[bLo, bHi); none when over maxEdits. */
function myers(
  a: Int32Array,
  aLo: number,
  aHi: number,
  b: Int32Array,
  bLo: number,
  bHi: number,
  maxEdits: number,
  runs: Array<[number, number, number]>,
): void {
  const n = aHi - aLo;
  const m = bHi - bLo;
  if (n === 0 || m === 0) return;
  const limit = Math.min(n + m, maxEdits);
  const offset = limit + 1;
  const v = new Int32Array(2 * limit + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= limit; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && (v[offset + k - 1] as number) < (v[offset + k + 1] as number))
          ? (v[offset + k + 1] as number)
          : (v[offset + k - 1] as number) + 1;
      let y = x - k;
      while (x < n && y < m && a[aLo + x] === b[bLo + y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    trace.push(v.slice(offset - d, offset + d + 1));
    if (found !== -1) break;
  }
  if (found === -1) return;

  const local: Array<[number, number, number]> = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const previous = trace[d - 1] as Int32Array; // index k + (d - 1)
    const k = x - y;
    const at = (kk: number): number => previous[kk + d - 1] as number;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    const startX = prevK === k + 1 ? prevX : prevX + 1;
    const startY = startX - k;
    if (x > startX) local.push([aLo + startX, bLo + startY, x - startX]);
    x = prevX;
    y = prevY;
  }
  if (x > 0) local.push([aLo, bLo, x]);
  for (let i = local.length - 1; i >= 0; i--) runs.push(local[i] as [number, number, number]);
}
