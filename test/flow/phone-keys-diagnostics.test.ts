import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { DIAGNOSTIC_CODES } from '../../server/flow/diagnostic-codes.ts';
import { PHONE_CASES, PHONE_VALID, editPhone } from './phone-diagnostic-cases.ts';

describe('diagnostics of the keys a phone call uses', () => {
  it('accepts a flow with a keypad, a collected number, a warm transfer, voicemail and send_dtmf, with no diagnostics', () => {
    const result = parseFlow(PHONE_VALID);
    expect(result.diagnostics).toEqual([]);
    const menu = result.document?.states.menu;
    expect(menu?.dtmf?.keys).toEqual({ '1': 'book', '0': 'human', '*': 'menu', '#': 'book' });
    expect(menu?.dtmf?.collect).toEqual({ into: 'account_number', max_digits: 8, finish_on: '#', timeout_ms: 6000, then: 'verify' });
    expect(result.document?.states.human?.on_enter?.transfer).toEqual({ to: '+15551234567', mode: 'warm', summary: true, on_failed: 'menu' });
    expect(result.document?.settings?.voicemail).toEqual({ detect: true, message: 'Hi, this is the clinic. Please call us back.' });
    expect(result.document?.tools?.press_for_operator?.send_dtmf).toBe('0w1#');
  });

  it.each(PHONE_CASES)('reports $code at line $line, column $column ($mentions)', (c) => {
    const result = parseFlow(c.yaml);
    const found = result.diagnostics.find((d) => d.code === c.code && d.path.join('.') === c.path.join('.'));
    expect(found, JSON.stringify(result.diagnostics, null, 1)).toBeDefined();
    expect(found).toMatchObject({ severity: c.severity, line: c.line, column: c.column });
    expect(found!.message).toContain(c.mentions);
    for (const d of result.diagnostics) expect(d.severity, d.code).toBe(DIAGNOSTIC_CODES[d.code]);
    expect(result.document).toBeNull();
  });

  it('takes a SIP address as a transfer target, and a cold transfer without on_failed', () => {
    const sip = parseFlow(editPhone('to: "+15551234567", mode: warm, summary: true, on_failed: menu', 'to: "sip:desk@pbx.example.com:5060"'));
    expect(sip.diagnostics).toEqual([]);
    expect(sip.document?.states.human?.on_enter?.transfer).toEqual({ to: 'sip:desk@pbx.example.com:5060' });
  });

  it('counts keypad moves and a failed transfer as ways into a state, and a transferring state as final', () => {
    // verify is reached only by the collected number, human only by the key 0.
    expect(parseFlow(PHONE_VALID).diagnostics.map((d) => d.code)).not.toContain('unreachable_state');
    const noCollect = parseFlow(editPhone('      collect: { into: account_number, max_digits: 8, finish_on: "#", timeout_ms: 6000, then: verify }\n', ''));
    expect(noCollect.diagnostics.map((d) => `${d.code}:${d.path.join('.')}`)).toEqual(['unreachable_state:states.verify', 'unresolved_placeholder:states.verify.agent.prompt']);
    const noFallback = parseFlow(editPhone('mode: warm, summary: true, on_failed: menu', 'mode: cold'));
    expect(noFallback.diagnostics).toEqual([]);
  });

  it('knows the variable a collected number is stored in, and reads placeholders in the voicemail message', () => {
    const unknown = parseFlow(editPhone('Please call us back.', 'Please call {office} back.'));
    expect(unknown.diagnostics).toMatchObject([{ code: 'unresolved_placeholder', line: 5, column: 76, path: ['settings', 'voicemail', 'message'] }]);
    const collected = parseFlow(editPhone('Please call us back.', 'About {account_number}.'));
    expect(collected.diagnostics).toEqual([]);
  });

  it('tells a designer who forgot the quotes on a keypad key what YAML read', () => {
    const star = parseFlow(editPhone('"*": menu', '*: menu'));
    expect(star.diagnostics[0]).toMatchObject({ code: 'yaml_syntax', line: 11 });
    const numeric = parseFlow(editPhone('"1": book,', '1: book,'));
    expect(numeric.diagnostics).toEqual([]);
  });
});
