import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { encodeMulaw } from '../../../server/audio/g711.ts';
import type { CarrierName, StreamMessage } from '../../../server/transports/carriers/carrier.ts';
import { CARRIERS } from '../../../server/transports/carriers/index.ts';
import { scaledRuns } from '../../support/property-runs.ts';
import { MAX_MEDIA_PAYLOAD_BASE64 } from '../../../server/transports/carriers/stream-json.ts';
import { carrierMessages } from '../../fakes/carriers/stream-messages.ts';

const NAMES: CarrierName[] = ['twilio', 'telnyx', 'plivo'];
const frame = encodeMulaw(Int16Array.from({ length: 160 }, (_, i) => Math.round(5000 * Math.sin(i / 3))));

describe.each(NAMES)('%s stream messages', (name) => {
  const carrier = CARRIERS[name];
  const wire = carrierMessages(name);
  const read = (message: object | null) => carrier.parseStreamMessage(JSON.stringify(message));

  test('connected and start give the stream, the call and the parameters our markup asked for', () => {
    const connected = wire.connected();
    if (connected) expect(read(connected)).toEqual({ type: 'connected' });
    const start = read(wire.start({ sequence: 1, streamId: 'stream-1', callId: 'call-1', from: '+1555', to: '+1556', customParameters: { token: 'T0k3n' }, encoding: 'mulaw' }));
    expect(start).toEqual({ type: 'start', streamId: 'stream-1', callId: 'call-1', customParameters: { token: 'T0k3n' }, encoding: 'mulaw', sampleRate: 8000 });
  });

  test('media gives the frame bytes with its sequence number, dtmf the key, a mark acknowledgement its name', () => {
    // Telnyx's frames are put back in order by their media chunk number (keys and marks take
    // message sequence numbers too, which would look like lost audio); the others by sequence.
    const order = name === 'telnyx' ? 6 : 7;
    expect(read(wire.media({ sequence: 7, streamId: 'stream-1', chunk: 6, timestamp: 120, payload: frame }))).toEqual({ type: 'media', payload: frame, sequence: order, timestamp: 120, track: 'inbound' });
    expect(read(wire.dtmf({ sequence: 8, streamId: 'stream-1', digit: '#' }))).toEqual({ type: 'dtmf', digit: '#' });
    expect(read(wire.markAck({ sequence: 9, streamId: 'stream-1', name: 'turn-3:sentence-2' }))).toEqual({ type: 'mark', name: 'turn-3:sentence-2' });
    const stop = wire.stop({ sequence: 10, streamId: 'stream-1', callId: 'call-1' });
    if (stop) expect(read(stop)).toEqual({ type: 'stop' });
  });

  test('an oversized media frame, a bad payload, an unknown key and a start without ids are malformed', () => {
    const huge = wire.media({ sequence: 1, streamId: 's', chunk: 1, timestamp: 20, payload: new Uint8Array(((MAX_MEDIA_PAYLOAD_BASE64 / 4) * 3) + 3) });
    expect(read(huge)).toMatchObject({ type: 'malformed', reason: expect.stringMatching(/over the/) });
    const notBase64 = JSON.parse(JSON.stringify(wire.media({ sequence: 1, streamId: 's', chunk: 1, timestamp: 20, payload: frame }))) as { media: { payload: unknown } };
    notBase64.media.payload = '@@@@';
    expect(read(notBase64).type).toBe('malformed');
    notBase64.media.payload = 12;
    expect(read(notBase64).type).toBe('malformed');
    expect(read(wire.dtmf({ sequence: 1, streamId: 's', digit: 'X' })).type).toBe('malformed');
    expect(read({ event: 'start', start: {} }).type).toBe('malformed');
    expect(read({ event: 'start', start: 'nope' }).type).toBe('malformed');
  });

  test('text that is not a JSON object with an event name is malformed; an undocumented event is ignored', () => {
    for (const text of ['', 'not json', '[]', 'null', '42', '{"event": 3}', '{}', '{"event":"media"', 'x'.repeat(200_000)]) expect(carrier.parseStreamMessage(text).type).toBe('malformed');
    expect(carrier.parseStreamMessage('{"event":"heartbeat"}')).toEqual({ type: 'ignored', event: 'heartbeat' });
  });

  test('no input, of any shape, makes it throw', () => {
    const known = ['connected', 'start', 'media', 'dtmf', 'mark', 'stop', 'playedStream', 'clearedAudio', 'error'];
    const message = fc.record(
      {
        event: fc.oneof(fc.constantFrom(...known), fc.anything()),
        start: fc.anything(),
        media: fc.oneof(fc.anything(), fc.record({ payload: fc.oneof(fc.base64String(), fc.anything()), timestamp: fc.anything() })),
        dtmf: fc.anything(),
        mark: fc.anything(),
        sequenceNumber: fc.anything(),
        sequence_number: fc.anything(),
        name: fc.anything(),
      },
      { requiredKeys: [] },
    );
    const texts = fc.oneof(fc.string(), fc.json(), message.map((value) => JSON.stringify(value) ?? ''));
    fc.assert(
      fc.property(texts, (text) => {
        const parsed: StreamMessage = carrier.parseStreamMessage(text);
        expect(['connected', 'start', 'media', 'dtmf', 'mark', 'stop', 'malformed', 'ignored']).toContain(parsed.type);
      }),
      { numRuns: scaledRuns(400) },
    );
    expect(() => carrier.parseStreamMessage(undefined as unknown as string)).not.toThrow();
  });

  test('what we send is what the carrier documents: it reads back as our audio, our mark and a clear', () => {
    const streamId = 'stream-1';
    expect(wire.parseOutbound(carrier.mediaMessage(streamId, frame), streamId)).toEqual({ kind: 'media', payload: frame });
    expect(wire.parseOutbound(carrier.markMessage(streamId, 'turn-3'), streamId)).toEqual({ kind: 'mark', name: 'turn-3' });
    expect(wire.parseOutbound(carrier.clearMessage(streamId), streamId)).toEqual({ kind: 'clear' });
  });
});

test('Telnyx reports A-law streams as A-law, and refuses a codec we cannot decode', () => {
  const wire = carrierMessages('telnyx');
  const alaw = wire.start({ sequence: 1, streamId: 's', callId: 'v3:c', from: '', to: '', customParameters: {}, encoding: 'alaw' });
  expect(CARRIERS.telnyx.parseStreamMessage(JSON.stringify(alaw))).toMatchObject({ type: 'start', encoding: 'alaw' });
  const opus = JSON.parse(JSON.stringify(alaw)) as { start: { media_format: { encoding: string } } };
  opus.start.media_format.encoding = 'OPUS';
  expect(CARRIERS.telnyx.parseStreamMessage(JSON.stringify(opus))).toMatchObject({ type: 'malformed', reason: expect.stringMatching(/OPUS/) });
});

test('Telnyx Call Control custom parameters, a list of name and value, are read like TeXML ones', () => {
  const start = { event: 'start', sequence_number: '1', stream_id: 's', start: { call_control_id: 'v3:c', media_format: { encoding: 'PCMU', sample_rate: 8000, channels: 1 }, custom_parameters: [{ name: 'token', value: 'abc' }] } };
  expect(CARRIERS.telnyx.parseStreamMessage(JSON.stringify(start))).toMatchObject({ customParameters: { token: 'abc' } });
});

test("Plivo's clearedAudio confirmation is ignored rather than taken for a mark", () => {
  expect(CARRIERS.plivo.parseStreamMessage(JSON.stringify({ event: 'clearedAudio', sequenceNumber: 4, streamId: 's' }))).toEqual({ type: 'ignored', event: 'clearedAudio' });
});

test('a Twilio or Plivo start announcing audio other than 8 kHz μ-law is malformed, so the call is not fed noise', () => {
  const twilioStart = carrierMessages('twilio').start({ sequence: 1, streamId: 'MZ1', callId: 'CA1', from: '', to: '', customParameters: {}, encoding: 'mulaw' }) as { start: { mediaFormat: { encoding: string } } };
  twilioStart.start.mediaFormat.encoding = 'audio/x-l16';
  expect(CARRIERS.twilio.parseStreamMessage(JSON.stringify(twilioStart))).toMatchObject({ type: 'malformed', reason: expect.stringMatching(/x-l16/) });
  const plivoStart = carrierMessages('plivo').start({ sequence: 1, streamId: 's', callId: 'c', from: '', to: '', customParameters: {}, encoding: 'mulaw' }) as { start: { mediaFormat: { encoding: string } } };
  plivoStart.start.mediaFormat.encoding = 'audio/x-l16';
  expect(CARRIERS.plivo.parseStreamMessage(JSON.stringify(plivoStart)).type).toBe('malformed');
});
