// docs/architecture.md explains the layer rules to a newcomer; test/architecture/layers.ts is
// the one statement of them. Its table must say exactly what RULES says, so a rule changed in
// one place and not the other fails here instead of misleading the next reader.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RULES, type Layer } from './layers.ts';

const DOC = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');

interface DocumentedRule {
  value: string[];
  types: string[];
  pure: boolean;
}

/** The rows between the layer-rules markers: layer → what its row says it may import. */
function documentedRules(text: string): Map<string, DocumentedRule> {
  const table = /<!-- layer-rules:start -->([\s\S]*?)<!-- layer-rules:end -->/.exec(text)?.[1] ?? '';
  const layers = (cell: string) => [...cell.matchAll(/`([a-z]+)`/g)].map((m) => m[1]!);
  const rows = new Map<string, DocumentedRule>();
  for (const line of table.split('\n')) {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    const layer = /^`([a-z]+)`$/.exec(cells[0] ?? '')?.[1];
    if (!layer || cells.length !== 4) continue;
    rows.set(layer, { value: layers(cells[1]!), types: layers(cells[2]!), pure: cells[3] === 'pure' });
  }
  return rows;
}

function ruleOf(layer: Layer): DocumentedRule {
  const rule = RULES[layer];
  return { value: [...rule.value], types: [...(rule.types ?? [])], pure: rule.pure === true };
}

describe('docs/architecture.md', () => {
  const documented = documentedRules(DOC);

  it('lists every layer of test/architecture/layers.ts, and no other', () => {
    expect([...documented.keys()].sort()).toEqual(Object.keys(RULES).sort());
  });

  it.each(Object.keys(RULES) as Layer[])('says what the %s layer may import, as layers.ts does', (layer) => {
    const row = documented.get(layer);
    expect(row, `no row for ${layer}`).toBeDefined();
    const sorted = (rule: DocumentedRule) => ({ value: [...rule.value].sort(), types: [...rule.types].sort(), pure: rule.pure });
    expect(sorted(row!)).toEqual(sorted(ruleOf(layer)));
  });

  it('notices a row that drifted from the rules', () => {
    const drifted = DOC.replace('| `flow` | — | — | pure |', '| `flow` | `engine` | — | pure |');
    expect(drifted).not.toBe(DOC);
    expect(documentedRules(drifted).get('flow')!.value).toEqual(['engine']);
    expect(documentedRules(drifted).get('flow')!.value).not.toEqual(ruleOf('flow').value);
  });
});
