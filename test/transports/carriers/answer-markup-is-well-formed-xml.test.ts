import { describe, expect, test } from 'vitest';
import { CARRIERS } from '../../../server/transports/carriers/index.ts';
import { find, parseXml } from './xml-well-formed.ts';

// Characters a URL, a number or a flow's sentence may hold that would break XML unescaped.
const STREAM_URL = 'wss://voice.example.com/telephony/stream?a=1&b="2"&c=<3>&d=\'4\'';
const TOKEN = 'Tk0123456789abcdefXYZ';

describe.each(['twilio', 'telnyx', 'plivo'] as const)('%s markup', (name) => {
  const carrier = CARRIERS[name];

  test('answering with a stream names the exact stream URL and hands the token back as a parameter', () => {
    const markup = carrier.answerWithStream(STREAM_URL, { token: TOKEN });
    expect(markup.contentType).toMatch(/^text\/xml/);
    const response = parseXml(markup.body);
    expect(response.name).toBe('Response');
    const stream = find(response, 'Stream')!;
    if (name === 'plivo') {
      expect(stream.text).toBe(STREAM_URL);
      expect(stream.attributes).toMatchObject({ bidirectional: 'true', keepCallAlive: 'true', contentType: 'audio/x-mulaw;rate=8000', extraHeaders: `token=${TOKEN}` });
    } else {
      expect(find(response, 'Connect')?.children).toContain(stream);
      expect(stream.attributes.url).toBe(STREAM_URL);
      const parameter = find(stream, 'Parameter')!;
      expect(parameter.attributes).toEqual({ name: 'token', value: TOKEN });
    }
    if (name === 'telnyx') expect(stream.attributes).toMatchObject({ bidirectionalMode: 'rtp', bidirectionalCodec: 'PCMU' });
  });

  test('a stream in voicemail mode hands its mode back beside the token, letters and digits only', () => {
    const markup = carrier.answerWithStream(STREAM_URL, { token: TOKEN, parameters: { voicemail: '1' } });
    const stream = find(parseXml(markup.body), 'Stream')!;
    if (name === 'plivo') expect(stream.attributes.extraHeaders).toBe(`token=${TOKEN},voicemail=1`);
    else expect(stream.children.filter((c) => c.name === 'Parameter').map((c) => c.attributes)).toEqual([{ name: 'token', value: TOKEN }, { name: 'voicemail', value: '1' }]);
    expect(() => carrier.answerWithStream(STREAM_URL, { token: TOKEN, parameters: { voicemail: 'a,b=c' } })).toThrow(RangeError);
  });

  test('hanging up says nothing and ends the call', () => {
    const response = parseXml(carrier.hangUpMarkup().body);
    expect(response.children.map((child) => child.name)).toEqual(['Hangup']);
  });

  test('a sentence with markup characters is spoken as text, then the call hangs up', () => {
    const text = 'Press <1> & say "yes" — it\'s free';
    const response = parseXml(carrier.sayAndHangUp(text).body);
    expect(response.children.map((child) => child.name)).toEqual([name === 'plivo' ? 'Speak' : 'Say', 'Hangup']);
    expect(response.children[0]!.text).toBe(text);
  });

  test('an unknown number hears that it is not in service, and the call ends', () => {
    const response = parseXml(carrier.notInService().body);
    expect(response.children[0]!.text).toMatch(/not in service/);
    expect(response.children.at(-1)!.name).toBe('Hangup');
  });

  test('a cold transfer dials the number, or the SIP address, with the caller id asked for', () => {
    const toNumber = parseXml(carrier.transferMarkup({ to: '+15551234567', callerId: '+15550001111' }).body);
    expect(find(toNumber, 'Dial')!.attributes.callerId).toBe('+15550001111');
    expect(find(toNumber, 'Number')!.text).toBe('+15551234567');
    const toSip = parseXml(carrier.transferMarkup({ to: 'sip:desk@pbx.example.com;transport=tls' }).body);
    expect(find(toSip, name === 'plivo' ? 'User' : 'Sip')!.text).toBe('sip:desk@pbx.example.com;transport=tls');
  });
});

test('Telnyx streams A-law both ways when asked', () => {
  const stream = find(parseXml(CARRIERS.telnyx.answerWithStream('wss://x.example/s', { token: TOKEN, encoding: 'alaw' }).body), 'Stream')!;
  expect(stream.attributes).toMatchObject({ codec: 'PCMA', bidirectionalCodec: 'PCMA' });
});

test('a Plivo stream token outside the letters and digits its extraHeaders carry is refused', () => {
  expect(() => CARRIERS.plivo.answerWithStream('wss://x.example/s', { token: 'a,b=c' })).toThrow(RangeError);
});

test('the XML reader used above rejects what a carrier would reject', () => {
  expect(() => parseXml('<?xml version="1.0" encoding="UTF-8"?>\n<Response><Say>a & b</Say></Response>')).toThrow(/entity/);
  expect(() => parseXml('<?xml version="1.0" encoding="UTF-8"?>\n<Response><Say>x</Response>')).toThrow();
  expect(() => parseXml('<?xml version="1.0" encoding="UTF-8"?>\n<Response><Stream url="a"b"/></Response>')).toThrow();
});

describe.each(['twilio', 'telnyx'] as const)('%s warm transfer markup', (name) => {
  const warm = CARRIERS[name].warmTransfer!;

  test('the person hears the summary as text, then joins the conference, starting it and ending it when they leave', () => {
    const summary = 'Ann <ann@example.com> & Bo say "move it" to 9 o\'clock';
    const response = parseXml(warm.personJoins('voxflow-abc_123', summary).body);
    expect(response.children.map((child) => child.name)).toEqual(['Say', 'Dial']);
    expect(response.children[0]!.text).toBe(summary);
    const conference = find(response, 'Conference')!;
    expect(conference.text).toBe('voxflow-abc_123');
    expect(conference.attributes).toEqual({ startConferenceOnEnter: 'true', endConferenceOnExit: 'true', beep: 'false' });
    // No summary asked for: straight into the conference.
    expect(parseXml(warm.personJoins('voxflow-abc_123', '').body).children.map((child) => child.name)).toEqual(['Dial']);
  });

  test('the caller waits in the same conference for the person, and leaving ends it', () => {
    const response = parseXml(warm.callerJoins('voxflow-abc_123').body);
    expect(response.children.map((child) => child.name)).toEqual(['Dial']);
    expect(find(response, 'Conference')).toMatchObject({ text: 'voxflow-abc_123', attributes: { startConferenceOnEnter: 'false', endConferenceOnExit: 'true', beep: 'false' } });
  });
});

describe('plivo warm transfer markup (its caller is moved to it by URL, with a transfer)', () => {
  const warm = CARRIERS.plivo.warmTransfer!;

  test('the person hears the summary in Plivo\'s voice, then starts the conference, ending it when they leave', () => {
    const summary = 'Ann <ann@example.com> & Bo say "move it" to 9 o\'clock';
    const response = parseXml(warm.personJoins('voxflow-abc_123', summary).body);
    expect(response.children.map((child) => child.name)).toEqual(['Speak', 'Conference']);
    expect(response.children[0]!.text).toBe(summary);
    expect(find(response, 'Conference')).toMatchObject({ text: 'voxflow-abc_123', attributes: { startConferenceOnEnter: 'true', endConferenceOnExit: 'true' } });
    expect(parseXml(warm.personJoins('voxflow-abc_123', '').body).children.map((child) => child.name)).toEqual(['Conference']);
  });

  test('the caller waits in the same conference for the person', () => {
    const response = parseXml(warm.callerJoins('voxflow-abc_123').body);
    expect(find(response, 'Conference')).toMatchObject({ text: 'voxflow-abc_123', attributes: { startConferenceOnEnter: 'false', endConferenceOnExit: 'true' } });
  });
});
