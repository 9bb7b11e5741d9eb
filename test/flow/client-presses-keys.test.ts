import { describe, expect, it } from 'vitest';
import { CLIENT_MESSAGE_TYPES, parseClientMessage } from '../../server/protocol/client-messages.ts';

describe('a client presses keys for the caller', () => {
  it('is a known message type, taken with 1 to 32 keypad keys', () => {
    expect(CLIENT_MESSAGE_TYPES).toContain('dtmf');
    expect(parseClientMessage('{"type":"dtmf","digits":"12#"}')).toEqual({ ok: true, message: { type: 'dtmf', digits: '12#' } });
    expect(parseClientMessage(JSON.stringify({ type: 'dtmf', digits: '*'.repeat(32) }))).toMatchObject({ ok: true });
  });

  it.each([
    ['no keys', ''],
    ['a letter', '12a'],
    ['a pause, which only a send_dtmf tool makes', '1w2'],
    ['33 keys', '1'.repeat(33)],
    ['a space', '1 2'],
  ])('refuses %s as a malformed message, naming the rule', (_what, digits) => {
    const parsed = parseClientMessage(JSON.stringify({ type: 'dtmf', digits }));
    expect(parsed).toEqual({ ok: false, code: 'malformed_message', message: 'bad "dtmf" message: digits: digits are 1 to 32 of 0-9, * and #' });
  });

  it('refuses digits that are not text, and a message without them', () => {
    expect(parseClientMessage('{"type":"dtmf","digits":12}')).toMatchObject({ ok: false, code: 'malformed_message' });
    expect(parseClientMessage('{"type":"dtmf"}')).toMatchObject({ ok: false, code: 'malformed_message' });
  });
});
