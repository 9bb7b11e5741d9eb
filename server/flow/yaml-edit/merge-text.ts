// The three-way text merge: the stored text (ours) gets the edit that turned the library's
// rendering before the merge (base) into its rendering after (theirs). Layout differences
// between ours and base and content edits between base and theirs usually touch different
// lines, and where they touch the same line, different characters; the result is trusted only
// once it parses to exactly the data.
//
// Why a hand-written diff (diff-sequences.ts) and not node-diff3: node-diff3 3.2.1 behind this
// same function passed every yaml-edit test, but its Hunt–McIlroy LCS scans its candidate list
// for every matching line, and a flow repeats the same lines (`    agent:`, `    tools:`) in
// every state, so its cost grows with the square of the document. Measured on generated flows
// (test/support/generate-flow.ts, one prompt and one tool list changed, CPU time, best of 7,
// including the verifying parse of the result): 100 states (1,008 lines) 51 ms here against
// 75 ms; 200 states 64 ms against 245 ms; 400 states 158 ms against 1,159 ms. A whole
// applyJsonToYaml that needs the whole-document merge (an alias in the flow) took 230 ms
// against 358 ms at 200 states and 527 ms against 1,467 ms at 400. The anchored diff grows with
// the document as its parse does: unique lines pin the alignment, and Myers runs only between
// them, bounded to a fixed number of edits.

import { indentOf } from './detect-layout.ts';
import { diff, type Hunk } from './diff-sequences.ts';
import type { Data } from './normalize-input.ts';
import { holds } from './verify-text.ts';

/** Ours with the edit that turned base into theirs, when that provably gives `data`. */
export function mergeTexts(base: string, ours: string, theirs: string, data: Data): string | null {
  const ids = new Map<string, number>();
  const intern = (text: string): { lines: string[]; codes: Int32Array } => {
    const lines = text.split('\n');
    const codes = new Int32Array(lines.length);
    lines.forEach((line, i) => {
      let id = ids.get(line);
      if (id === undefined) ids.set(line, (id = ids.size));
      codes[i] = id;
    });
    return { lines, codes };
  };
  const b = intern(base);
  const o = intern(ours);
  const t = intern(theirs);
  const oursHunks = diff(b.codes, o.codes, true, MAX_LINE_EDITS);
  const theirsHunks = diff(b.codes, t.codes, true, MAX_LINE_EDITS);

  const attempt = (fine: boolean): string =>
    merge3(b.lines, o.lines, t.lines, oursHunks, theirsHunks, (baseLines, oursLines, theirsLines) => {
      // Only line for line: merging characters across lines that were split or joined mixes
      // up indentation.
      if (!fine || baseLines.length !== oursLines.length || oursLines.length !== theirsLines.length) {
        return theirsLines;
      }
      const merged: string[] = [];
      for (let i = 0; i < theirsLines.length; i++) {
        const line = mergeChars(baseLines[i] as string, oursLines[i] as string, theirsLines[i] as string);
        const indent = line === null ? -1 : indentOf(line);
        if (indent !== indentOf(oursLines[i] as string) && indent !== indentOf(theirsLines[i] as string)) {
          return theirsLines;
        }
        merged.push(line as string);
      }
      return merged;
    }).join('\n');

  const fine = attempt(true);
  if (fine !== theirs && holds(fine, data)) return fine;
  const coarse = attempt(false);
  if (coarse !== fine && coarse !== theirs && holds(coarse, data)) return coarse;
  return null;
}

const MAX_LINE_EDITS = 2000;
const MAX_CHAR_EDITS = 400;
const MAX_CHAR_MERGE_LENGTH = 20_000;

/**
 * Within a line conflict, layout edits and content edits usually touch different characters;
 * where they touch the same ones the content edit wins (the result is verified by the caller).
 */
function mergeChars(base: string, ours: string, theirs: string): string | null {
  if (ours === theirs) return ours;
  if (base.length + ours.length + theirs.length > MAX_CHAR_MERGE_LENGTH) return null;
  const codes = (text: string): Int32Array => {
    const out = new Int32Array(text.length);
    for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
    return out;
  };
  const b = codes(base);
  const o = codes(ours);
  const t = codes(theirs);
  const oursHunks = diff(b, o, false, MAX_CHAR_EDITS);
  const theirsHunks = diff(b, t, false, MAX_CHAR_EDITS);
  return merge3(base.split(''), ours.split(''), theirs.split(''), oursHunks, theirsHunks, (_b, _o, t) => t).join('');
}

function merge3<T>(
  base: readonly T[],
  ours: readonly T[],
  theirs: readonly T[],
  oursHunks: readonly Hunk[],
  theirsHunks: readonly Hunk[],
  resolve: (base: T[], ours: T[], theirs: T[]) => T[],
): T[] {
  const out: T[] = [];
  let cursor = 0; // in base
  let oi = 0;
  let ti = 0;
  let oShift = 0; // ours index minus base index after the hunks taken so far
  let tShift = 0;
  while (oi < oursHunks.length || ti < theirsHunks.length) {
    const nextO = oursHunks[oi];
    const nextT = theirsHunks[ti];
    const takeOurs = nextO !== undefined && (nextT === undefined || startsBefore(nextO, nextT));
    const first = (takeOurs ? nextO : nextT) as Hunk;
    const groupO: Hunk[] = [];
    const groupT: Hunk[] = [];
    if (takeOurs) {
      groupO.push(first);
      oi++;
    } else {
      groupT.push(first);
      ti++;
    }
    let start = first.aStart;
    let end = first.aEnd;
    for (;;) {
      const o = oursHunks[oi];
      const t = theirsHunks[ti];
      let added: Hunk;
      if (o && joins(o, start, end)) {
        groupO.push((added = o));
        oi++;
      } else if (t && joins(t, start, end)) {
        groupT.push((added = t));
        ti++;
      } else break;
      start = Math.min(start, added.aStart);
      end = Math.max(end, added.aEnd);
    }
    for (let i = cursor; i < start; i++) out.push(base[i] as T);
    const oDelta = groupO.reduce((sum, h) => sum + (h.bEnd - h.bStart) - (h.aEnd - h.aStart), 0);
    const tDelta = groupT.reduce((sum, h) => sum + (h.bEnd - h.bStart) - (h.aEnd - h.aStart), 0);
    const oursPart = ours.slice(start + oShift, end + oShift + oDelta);
    const theirsPart = theirs.slice(start + tShift, end + tShift + tDelta);
    if (groupT.length === 0) out.push(...oursPart);
    else if (groupO.length === 0) out.push(...theirsPart);
    else out.push(...resolve(base.slice(start, end), oursPart, theirsPart));
    oShift += oDelta;
    tShift += tDelta;
    cursor = end;
  }
  for (let i = cursor; i < base.length; i++) out.push(base[i] as T);
  return out;
}

// An insertion at the start of a change goes before it.
function startsBefore(a: Hunk, b: Hunk): boolean {
  if (a.aStart !== b.aStart) return a.aStart < b.aStart;
  return a.aStart === a.aEnd;
}

// Whether hunk h must be resolved together with the group [start, end): overlapping ranges, or
// two insertions at the same place (their order would be a guess). Touching ranges are fine.
function joins(h: Hunk, start: number, end: number): boolean {
  if (h.aStart < end && start < h.aEnd) return true;
  return h.aStart === h.aEnd && start === end && h.aStart === start;
}
