import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { DIAGNOSTIC_CODES } from '../../server/flow/diagnostic-codes.ts';
import { EXTENDED_CASES, EXTENDED_VALID, editExtended } from './extended-diagnostic-cases.ts';

describe('diagnostics of the extended flow language (docs/flows.md#extended-flow-keys)', () => {
  it('accepts a flow that uses every extended key with no diagnostics at all', () => {
    const result = parseFlow(EXTENDED_VALID);
    expect(result.diagnostics).toEqual([]);
    expect(result.document?.states.greet?.on_enter?.say).toBe('Welcome to {office}. Calls are recorded.');
  });

  it.each(EXTENDED_CASES)('reports $code at line $line, column $column', (c) => {
    const result = parseFlow(c.yaml);
    const found = result.diagnostics.find((d) => d.code === c.code);
    expect(found, JSON.stringify(result.diagnostics, null, 1)).toBeDefined();
    expect(found).toMatchObject({ severity: c.severity, line: c.line, column: c.column, path: c.path });
    expect(found!.message).toContain(c.mentions);
    for (const d of result.diagnostics) expect(d.severity, d.code).toBe(DIAGNOSTIC_CODES[d.code]);
    if (c.severity === 'error') expect(result.document).toBeNull();
    else expect(result.document).not.toBeNull();
  });

  it('suggests the key a designer meant when an extended key is misspelt', () => {
    const found = parseFlow(editExtended('    endpointing_ms: 700', '    endpointng_ms: 700')).diagnostics[0];
    expect(found).toMatchObject({ code: 'unknown_key', line: 23, column: 5 });
    expect(found?.message).toContain('did you mean "endpointing_ms"');
  });

  it('refuses keys named after Object.prototype members as unknown keys', () => {
    for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const result = parseFlow(editExtended('    endpointing_ms: 700', `    ${key}: 700`));
      expect(result.diagnostics.map((d) => d.code), key).toContain('unknown_key');
      expect(result.document, key).toBeNull();
    }
    const topLevel = parseFlow(`constructor: x\n${EXTENDED_VALID}`);
    expect(topLevel.diagnostics[0]).toMatchObject({ code: 'unknown_key', line: 1, column: 1 });
  });

  it('lets a state list a top-level tool it does not define, and warns of a top-level tool nothing offers', () => {
    const listed = parseFlow(editExtended('tools: [check_day]', 'tools: [check_day, talk_to_human]'));
    expect(listed.diagnostics).toEqual([]);
    const unused = parseFlow(editExtended('  talk_to_human:\n    description: The caller asks for a person.\n', '  talk_to_human:\n    description: The caller asks for a person.\n  spare:\n    description: Never offered.\n'));
    expect(unused.diagnostics).toMatchObject([{ code: 'unlisted_tool', severity: 'warning', line: 17, column: 3, path: ['tools', 'spare'] }]);
  });

  it('counts a global tool target and result transitions as ways into a state', () => {
    // handoff is entered only through the global tool, booked only through a result.
    const codes = parseFlow(EXTENDED_VALID).diagnostics.map((d) => d.code);
    expect(codes).not.toContain('unreachable_state');
    const noGlobal = parseFlow(editExtended('    talk_to_human: { target: handoff }', '    talk_to_human: {}'));
    expect(noGlobal.diagnostics.map((d) => `${d.code}:${d.path.join('.')}`)).toContain('unreachable_state:states.handoff');
  });

  it('says nothing of a state with no way out when it ends the session', () => {
    const kept = parseFlow(editExtended('      say: Connecting you to a person.\n      end_session: true', '      say: Connecting you to a person.'));
    expect(kept.diagnostics.map((d) => `${d.code}:${d.path.join('.')}`)).toEqual(['dead_end_state:states.handoff']);
  });

  it('knows the variables on_enter.set and http.store set, and reads placeholders in on_enter.say and the idle reprompt', () => {
    const result = parseFlow(editExtended('reprompt: "Are you still there?"', 'reprompt: "Still there, {caller}?"'));
    expect(result.diagnostics).toMatchObject([{ code: 'unresolved_placeholder', line: 11, column: 50, path: ['settings', 'idle', 'reprompt'] }]);
  });

  it('refuses a URL with credentials in it, and one that is no URL', () => {
    const withUser = parseFlow(editExtended('url: https://example.com/slots', 'url: https://me:pw@example.com/slots'));
    expect(withUser.diagnostics[0]).toMatchObject({ code: 'invalid_http_url', message: expect.stringContaining('{secret.NAME}') });
    const notUrl = parseFlow(editExtended('url: https://example.com/slots', 'url: example.com/slots'));
    expect(notUrl.diagnostics[0]).toMatchObject({ code: 'invalid_http_url', message: expect.stringContaining('in full') });
  });
});
