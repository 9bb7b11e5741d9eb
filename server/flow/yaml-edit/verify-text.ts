// Every piece of text this folder writes is trusted only once parsing it gives exactly the data
// it must hold; these are the parses that check.

import type { Document, Node } from 'yaml';
import { parseYaml } from '../parse-yaml.ts';
import { MAX_YAML_ALIASES } from '../types.ts';
import { dataEquals, type Data } from './normalize-input.ts';

/** For the parses that check work in progress, whose warnings are of no use to anyone. */
export const QUIET = { logLevel: 'silent' } as const;

export function safeToJS(doc: Document, node: Node): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: node.toJS(doc, { maxAliasCount: MAX_YAML_ALIASES }) };
  } catch {
    return { ok: false };
  }
}

/** Whether `text` is YAML without errors that holds exactly `data`. */
export function holds(text: string, data: Data): boolean {
  const doc = parseYaml(text, QUIET);
  if (doc.errors.length > 0) return false;
  try {
    return dataEquals(doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }), data);
  } catch {
    return false;
  }
}
