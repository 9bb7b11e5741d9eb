import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { DIAGNOSTIC_CODES } from '../../server/flow/diagnostic-codes.ts';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The rows of the README's Diagnostics table: code to the text of its severity column. */
function documentedCodes(): Map<string, string> {
  const section = README.split(/^### Diagnostics$/m)[1]?.split(/^##/m)[0] ?? '';
  const rows = new Map<string, string>();
  for (const match of section.matchAll(/^\| `([a-z_]+)` \| ([^|]+) \|/gm)) rows.set(match[1]!, match[2]!.trim());
  return rows;
}

describe('the diagnostic codes a designer can meet', () => {
  it('are all documented in the README with the severity they are reported at', () => {
    const documented = documentedCodes();
    for (const [code, severity] of Object.entries(DIAGNOSTIC_CODES)) {
      expect(documented.get(code), `README row for ${code}`).toMatch(new RegExp(`^${severity}\\b`));
    }
  });

  it('are the only codes the README documents', () => {
    expect([...documentedCodes().keys()].sort()).toEqual(Object.keys(DIAGNOSTIC_CODES).sort());
  });
});
