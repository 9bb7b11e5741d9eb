// The core step: the JSON merged onto the Document parsed from a piece of stored text, rendered,
// and carried back onto the stored text by a three-way merge where the library's rendering
// differs from the hand-written layout.

import type { Document } from 'yaml';
import { parseYaml } from '../parse-yaml.ts';
import { createContext, mergeNode, repairAliases } from './merge-document.ts';
import { mergeTexts } from './merge-text.ts';
import type { Data } from './normalize-input.ts';
import { QUIET, holds } from './verify-text.ts';

/**
 * The core step: `data` merged onto `doc`, the Document parsed from `ours`, as text checked to
 * hold exactly `data`. `render` writes a Document the way `ours` is laid out. Null when the
 * library does not render the merge correctly even with plain styles for new values.
 */
export function applyToText(
  ours: string,
  doc: Document,
  data: Data,
  render: (doc: Document) => string,
  hasAliases: boolean,
  onlyPlain = false,
): string | null {
  for (const plain of onlyPlain ? [true] : [false, true]) {
    // The first attempt mutated the Document.
    const target = plain && !onlyPlain ? parseYaml(ours, QUIET) : doc;
    const base = render(target);
    const ctx = createContext(target, hasAliases, plain);
    target.contents = mergeNode(ctx, target.contents, data);
    repairAliases(ctx);
    if (!ctx.changed) return ours;
    const theirs = render(target);
    const merged = base === ours ? null : mergeTexts(base, ours, theirs, data);
    if (merged !== null) return merged;
    if (holds(theirs, data)) return theirs;
  }
  return null;
}
