// The flow as JSON (visual editor, `GET/PUT /v1/flows/{id}/json`) versus the flow as YAML text
// that a designer also edits by hand. Applying JSON back onto the stored YAML must keep the
// designer's comments, key order and layout wherever the content did not change.
//
// The core step (apply-to-text.ts) merges the JSON structurally onto a parsed yaml Document
// (merge-document.ts: nodes whose content is unchanged keep their comments and styles) and
// renders it. The yaml library cannot reproduce every hand-written layout (`[a, b]` comes out
// as `[ a, b ]`, folded lines are joined, aligned comments lose their alignment, ...), so when
// the untouched Document does not render back to the stored text, the edit is carried over as
// a three-way text merge (merge-text.ts: stored text = ours, rendering before the merge = base,
// rendering after = theirs), trusted only once re-parsing it gives exactly the JSON
// (verify-text.ts).
//
// Rendering and parsing a whole 500-state document costs far more than the edit, so the core
// step runs on the smallest pieces of text that changed (splice-entries.ts, following the plan
// of plan-map.ts); a changed string or a renamed key is set in its own text by the library's
// CST edit (edit-scalars-in-place.ts). What cannot be cut into such pieces (aliases, keys that do not start their
// line, an emptied map, `|+` scalars) takes the core step on the whole document, checked the
// same way. A confined edit costs about one parse of the document (the library's parse is the
// floor); the whole-document step about four. The JSON is first read as plain data
// (normalize-input.ts), and written in the stored layout (detect-layout.ts).
//
// Pure TypeScript: the studio bundles this folder, so no Node APIs here.

import { Document, Scalar, isMap, isScalar } from 'yaml';
import { parseYaml } from '../parse-yaml.ts';
import type { ToStringOptions } from 'yaml';
import { MAX_YAML_ALIASES } from '../types.ts';
import { applyToText } from './apply-to-text.ts';
import {
  FRESH_OPTIONS,
  KEEP_CHOMPING,
  detectOptions,
  joinEnvelope,
  splitEnvelope,
  withFinalNewline,
} from './detect-layout.ts';
import { aliasTargets, freshNode } from './merge-document.ts';
import { dataEquals, errorMessage, isDataObject, toData, type DataObject } from './normalize-input.ts';
import { endsAsBefore, mapEdits, splice } from './splice-entries.ts';
import { QUIET, safeToJS } from './verify-text.ts';

/** The document as plain data. Throws when the YAML has errors (callers validate first). */
export function yamlToJson(yamlText: string): unknown {
  const doc = parseYaml(yamlText);
  if (doc.errors.length > 0) {
    throw new Error(`The YAML has errors: ${doc.errors.map((e) => e.message).join('; ')}`);
  }
  try {
    return doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    throw new Error(`The YAML cannot be converted to JSON: ${errorMessage(error)}`);
  }
}

/** A fresh YAML text for data that has no stored YAML yet. */
export function jsonToYaml(json: unknown): string {
  const doc = new Document();
  const root = freshNode(doc, toData(json, new Set()) ?? null);
  // The library writes a block scalar at the root without indentation, which breaks when the
  // text starts with a space.
  if (isScalar(root) && root.type === Scalar.BLOCK_LITERAL) root.type = Scalar.QUOTE_DOUBLE;
  doc.contents = root;
  return doc.toString(FRESH_OPTIONS);
}

/**
 * The stored YAML with the JSON applied onto it: the result parses to exactly the JSON, and
 * keeps comments, key order and layout wherever the content did not change. Throws only when
 * `yamlText` itself has YAML errors (the API refuses those before calling).
 */
export function applyJsonToYaml(yamlText: string, json: unknown): string {
  const data = toData(json, new Set()) ?? null;
  const envelope = splitEnvelope(yamlText);
  // Source tokens let a scalar be set in its own text (edit-scalars-in-place.ts).
  const doc = parseYaml(envelope.body, { ...QUIET, keepSourceTokens: true });
  if (doc.errors.length > 0) {
    throw new Error(
      `The stored YAML has errors, cannot apply JSON onto it: ${doc.errors.map((e) => e.message).join('; ')}`,
    );
  }
  const root = doc.contents;
  if (!isMap(root)) return jsonToYaml(data);

  // Cheaper than any rendering, and the common case for a studio that saves without edits.
  const before = safeToJS(doc, root);
  if (before.ok && dataEquals(before.value, data)) return yamlText;

  const ours = withFinalNewline(envelope, root);
  const options: ToStringOptions = { ...FRESH_OPTIONS, ...detectOptions(doc, ours) };
  const hasAliases = ours.includes('*') && aliasTargets(doc).size > 0;
  // Entries are checked on their own; an alias reaches outside its entry, and a block scalar
  // that keeps its trailing empty lines (`|+`) takes in the empty lines that follow it.
  if (before.ok && !hasAliases && !KEEP_CHOMPING.test(ours) && isDataObject(data)) {
    const edits = mapEdits(ours, root, before.value as DataObject, data, options);
    const spliced = edits && splice(ours, edits);
    if (edits && spliced !== null) return joinEnvelope(envelope, spliced, endsAsBefore(ours, edits));
  }
  const merged = applyToText(ours, doc, data, (d) => d.toString(options), hasAliases);
  // Rendering flaws of the library that even the plainest styles do not avoid (around explicit
  // `? ` keys): a fresh rendering of the JSON loses the comments but not the data.
  return merged === null ? jsonToYaml(data) : joinEnvelope(envelope, merged, merged === ours);
}
