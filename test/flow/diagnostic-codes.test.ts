import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { DIAGNOSTIC_CODES } from '../../server/flow/diagnostic-codes.ts';

const FLOWS_DOC = readFileSync(new URL('../../docs/flows.md', import.meta.url), 'utf8');

/** The rows of the Diagnostics table in docs/flows.md: code to the text of its severity column. */
function documentedCodes(): Map<string, string> {
  const section = FLOWS_DOC.split(/^## Diagnostics$/m)[1]?.split(/^## /m)[0] ?? '';
  const rows = new Map<string, string>();
  for (const match of section.matchAll(/^\| `([a-z_]+)` \| ([^|]+) \|/gm)) rows.set(match[1]!, match[2]!.trim());
  return rows;
}

describe('the diagnostic codes a designer can meet', () => {
  it('are all documented in docs/flows.md with the severity they are reported at', () => {
    const documented = documentedCodes();
    for (const [code, severity] of Object.entries(DIAGNOSTIC_CODES)) {
      expect(documented.get(code), `docs/flows.md row for ${code}`).toMatch(new RegExp(`^${severity}\\b`));
    }
  });

  it('are the only codes docs/flows.md documents', () => {
    expect([...documentedCodes().keys()].sort()).toEqual(Object.keys(DIAGNOSTIC_CODES).sort());
  });
});
