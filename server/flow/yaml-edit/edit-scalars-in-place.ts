// Scalars edited in their own text by the yaml library's CST edit (CST.setScalarValue), which
// rewrites only the scalar's token: a changed string keeps its quoting or block style and the
// comment after it, and a renamed key changes nothing but the key, where rendering the entry
// and merging the rendering back would cost a parse, two renderings and a diff. The caller
// still checks each result by parsing it, and rewrites the entry the general way where this
// edit does not apply or does not hold.

import { CST, Scalar } from 'yaml';
import { blockable } from './merge-document.ts';

/** A block scalar header with an explicit indentation indicator or keep chomping (`|2`, `>+`). */
const HEADER_INDICATORS = /^[|>](?:[-+]?[1-9]|[1-9]?\+)/;

/**
 * `entry`, the stored lines of one entry starting at `entryStart` in the parsed text, with the
 * string that `node` holds set to `value`; null where the library's edit does not apply (no
 * source token, a tag, an indentation indicator, trailing empty lines that would become text).
 * `indent` is where the lines of a new block scalar go.
 */
export function editStringInPlace(
  entry: string,
  entryStart: number,
  node: Scalar,
  value: string,
  indent: number,
): string | null {
  const token = node.srcToken;
  if (!CST.isScalar(token) || node.tag || typeof node.value !== 'string') return null;
  const before = CST.stringify(token);
  const at = token.offset - entryStart;
  if (at < 0 || entry.slice(at, at + before.length) !== before) return null;

  const edited: CST.FlowScalar | CST.BlockScalar = structuredClone(token);
  let type: Scalar.Type | undefined; // the token's own style
  if (token.type === 'block-scalar') {
    if (hasIndicators(token)) return null;
    // The library writes a block scalar made only of whitespace as an empty one.
    if (!/\S/.test(value)) type = Scalar.QUOTE_DOUBLE;
    // Its lines stay as deep as the designer put them.
    edited.indent = indentOfFirstLine(token.source) ?? indent;
  } else {
    // A plain scalar would fold the line breaks away on the next read.
    if (token.type === 'scalar' && blockable(value)) type = Scalar.BLOCK_LITERAL;
    edited.indent = indent;
  }
  CST.setScalarValue(edited, value, type ? { type } : {});
  if (edited.type === 'block-scalar' && hasIndicators(edited)) return null;
  // The library's CST edit always breaks a double-quoted string at its line breaks; written
  // whole, short ones keep their `\n` escapes on one line.
  if (edited.type === 'double-quoted-scalar' && value.includes('\n')) return null;
  return entry.slice(0, at) + CST.stringify(edited) + entry.slice(at + before.length);
}

function hasIndicators(token: CST.BlockScalar): boolean {
  const header = token.props[0];
  return header?.type !== 'block-scalar-header' || HEADER_INDICATORS.test(header.source);
}

function indentOfFirstLine(source: string): number | undefined {
  const line = /^( *)\S/m.exec(source);
  return line ? (line[1] as string).length : undefined;
}

/**
 * The text of `key`'s token with the key renamed to `name`, as an edit of `text` (the parsed
 * text the token was read from); null where the library's edit does not apply. The key keeps
 * its quoting where it can; the caller checks that it reads as `name`.
 */
export function renameKeyInPlace(
  text: string,
  key: Scalar,
  name: string,
): { from: number; to: number; text: string } | null {
  const token = key.srcToken;
  if (!CST.isScalar(token) || token.type === 'block-scalar' || key.tag) return null;
  const before = CST.stringify(token);
  if (text.slice(token.offset, token.offset + before.length) !== before) return null;
  const edited: CST.FlowScalar | CST.BlockScalar = structuredClone(token);
  CST.setScalarValue(edited, name, { implicitKey: true });
  return { from: token.offset, to: token.offset + before.length, text: CST.stringify(edited) };
}
