import { expect, test } from 'vitest';
import { CARRIERS } from '../../../server/transports/carriers/index.ts';

test('Twilio: an inbound call, an outbound call in progress and the end of a call', () => {
  const parse = CARRIERS.twilio.parseVoiceWebhook;
  expect(parse({ CallSid: 'CA1', From: '+1555', To: '+1556', Direction: 'inbound', CallStatus: 'ringing' })).toEqual({ ok: true, call: { callId: 'CA1', from: '+1555', to: '+1556', direction: 'inbound', status: 'ringing' } });
  expect(parse({ CallSid: 'CA2', From: '+1556', To: '+1557', Direction: 'outbound-api', CallStatus: 'in-progress' })).toMatchObject({ ok: true, call: { direction: 'outbound', status: 'answered' } });
  expect(parse({ CallSid: 'CA2', CallStatus: 'no-answer', Direction: 'outbound-api' })).toMatchObject({ call: { status: 'no_answer' } });
  expect(parse({ CallSid: 'CA2', CallStatus: 'busy' })).toMatchObject({ call: { status: 'busy' } });
});

test("Twilio: the answering machine's verdicts, the beep being the moment to leave a message", () => {
  const parse = CARRIERS.twilio.parseVoiceWebhook;
  const verdict = (AnsweredBy: string) => parse({ CallSid: 'CA1', CallStatus: 'in-progress', Direction: 'outbound-api', AnsweredBy });
  expect(verdict('machine_end_beep')).toMatchObject({ call: { answeredBy: 'machine_end' } });
  expect(verdict('machine_start')).toMatchObject({ call: { answeredBy: 'machine' } });
  expect(verdict('human')).toMatchObject({ call: { answeredBy: 'human' } });
  expect(verdict('fax')).toMatchObject({ call: { answeredBy: 'fax' } });
});

test('Telnyx TeXML posts the same form fields as Twilio', () => {
  expect(CARRIERS.telnyx.parseVoiceWebhook({ CallSid: 'v3:abc', From: '+1555', To: '+1556', Direction: 'inbound', CallStatus: 'ringing', AccountSid: 'x' })).toEqual({
    ok: true,
    call: { callId: 'v3:abc', from: '+1555', to: '+1556', direction: 'inbound', status: 'ringing' },
  });
});

test('Telnyx Call Control events: answered, hung up busy, and machine detection', () => {
  const event = (event_type: string, payload: Record<string, unknown>) => CARRIERS.telnyx.parseVoiceWebhook({ data: { event_type, payload: { call_control_id: 'v3:abc', from: '+1555', to: '+1556', direction: 'outgoing', ...payload } } });
  expect(event('call.answered', {})).toMatchObject({ ok: true, call: { callId: 'v3:abc', direction: 'outbound', status: 'answered' } });
  expect(event('call.hangup', { hangup_cause: 'user_busy' })).toMatchObject({ call: { status: 'busy' } });
  expect(event('call.hangup', { hangup_cause: 'normal_clearing' })).toMatchObject({ call: { status: 'completed' } });
  expect(event('call.machine.detection.ended', { result: 'machine' })).toMatchObject({ call: { answeredBy: 'machine' } });
  expect(event('call.machine.premium.detection.ended', { result: 'human_residence' })).toMatchObject({ call: { answeredBy: 'human' } });
  expect(event('call.machine.greeting.ended', { result: 'beep_detected' })).toMatchObject({ call: { answeredBy: 'machine_end' } });
  expect(event('call.speak.ended', {})).toMatchObject({ ok: false });
});

test('Plivo: CallUUID names the call, RequestUUID the placement, Machine=true a machine (not said to be past its greeting)', () => {
  const parse = CARRIERS.plivo.parseVoiceWebhook;
  expect(parse({ CallUUID: 'u1', From: '+1555', To: '+1556', Direction: 'inbound', CallStatus: 'ringing' })).toEqual({ ok: true, call: { callId: 'u1', from: '+1555', to: '+1556', direction: 'inbound', status: 'ringing' } });
  expect(parse({ CallUUID: 'u2', RequestUUID: 'r2', Direction: 'outbound', CallStatus: 'timeout' })).toMatchObject({ call: { status: 'no_answer', placementId: 'r2' } });
  expect(parse({ CallUUID: 'u2', RequestUUID: 'r2', Direction: 'outbound', Machine: 'true' })).toMatchObject({ call: { status: 'answered', answeredBy: 'machine' } });
});

test.each(['twilio', 'telnyx', 'plivo'] as const)('%s: a webhook without a call id or with an unknown status is refused with a reason', (name) => {
  const parse = CARRIERS[name].parseVoiceWebhook;
  expect(parse({ From: '+1555', CallStatus: 'ringing' })).toMatchObject({ ok: false, reason: expect.any(String) });
  expect(parse({ CallSid: 'x', CallUUID: 'x', CallStatus: 'exploded' })).toMatchObject({ ok: false, reason: expect.stringMatching(/exploded/) });
  expect(parse(null)).toMatchObject({ ok: false });
  expect(parse('CallSid=x')).toMatchObject({ ok: false });
});
