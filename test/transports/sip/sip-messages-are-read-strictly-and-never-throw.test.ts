// The SIP parser reads what RFC 3261 allows (compact header names, folded lines, bodies cut at
// their Content-Length) and refuses the rest with a reason, never by throwing: whatever arrives
// on the SIP port, from anyone. A request whose addressing headers are sound can be answered
// with 400; anything else is dropped.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_HEADERS, MAX_MESSAGE_BYTES, header, parseMessage, parseNameAddr, parseUri, serialize, type SipRequest } from '../../../server/transports/sip/message.ts';
import { parseOffer } from '../../../server/transports/sip/sdp.ts';
import { scaledRuns } from '../../support/property-runs.ts';

const SDP = 'v=0\r\no=pbx 1 1 IN IP4 192.0.2.10\r\ns=-\r\nc=IN IP4 192.0.2.10\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0 8 101\r\na=rtpmap:101 telephone-event/8000\r\n';

function invite(extra = '', body = SDP): string {
  return [
    'INVITE sip:1000@192.0.2.1 SIP/2.0',
    'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds',
    'Max-Forwards: 70',
    'To: <sip:1000@192.0.2.1>',
    'From: "Front desk" <sip:+15550100001@192.0.2.10>;tag=1928301774',
    'Call-ID: a84b4c76e66710@pc33.example.com',
    'CSeq: 314159 INVITE',
    'Contact: <sip:pbx@192.0.2.10>',
    'Content-Type: application/sdp',
    ...(extra ? [extra] : []),
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}

describe('the SIP parser', () => {
  it('reads a PBX\'s INVITE: its headers (compact forms too), folded lines and body', () => {
    const compact = invite().replace('Call-ID:', 'i:').replace('From:', 'f:').replace('Contact: <sip:pbx@192.0.2.10>', 'm: <sip:pbx@192.0.2.10>\r\n ;expires=60');
    const result = parseMessage(Buffer.from(compact));
    expect(result.ok).toBe(true);
    const message = (result as { message: SipRequest }).message;
    expect(message).toMatchObject({ kind: 'request', method: 'INVITE', uri: 'sip:1000@192.0.2.1' });
    expect(header(message, 'call-id')).toBe('a84b4c76e66710@pc33.example.com');
    expect(parseNameAddr(header(message, 'from')!)).toMatchObject({ display: 'Front desk', uri: 'sip:+15550100001@192.0.2.10', params: { tag: '1928301774' } });
    expect(header(message, 'contact')).toBe('<sip:pbx@192.0.2.10> ;expires=60');
    expect(message.body.toString()).toBe(SDP);
    expect(parseOffer(message.body.toString())).toMatchObject({ ok: true, offer: { address: '192.0.2.10', port: 40000, law: 'mulaw', telephoneEvent: 101 } });
    expect(parseUri('sip:+15551234567@pbx.example.com:5070;user=phone')).toMatchObject({ user: '+15551234567', host: 'pbx.example.com', port: 5070, params: { user: 'phone' } });
  });

  it.each([
    ['truncated before the end of its headers', invite().slice(0, 120), false],
    ['truncated in its body (Content-Length longer than the body)', invite().slice(0, -20), true],
    ['a Content-Length that is not a number', invite().replace(/Content-Length: \d+/, 'Content-Length: lots'), true],
    ['a negative Content-Length', invite().replace(/Content-Length: \d+/, 'Content-Length: -1'), true],
    ['two Content-Lengths', invite('Content-Length: 3'), true],
    ['no Call-ID', invite().replace(/Call-ID: .*\r\n/, ''), false],
    ['a CSeq naming another method', invite().replace('314159 INVITE', '314159 BYE'), true],
    ['a header flood', invite(Array.from({ length: MAX_HEADERS + 1 }, (_, i) => `X-Flood-${i}: 1`).join('\r\n')), false],
    ['an oversized message', invite(`X-Big: ${'a'.repeat(MAX_MESSAGE_BYTES)}`), false],
    ['a request line with no version', invite().replace(' SIP/2.0\r\n', '\r\n'), false],
    ['a Request-URI of another scheme', invite().replace('sip:1000@192.0.2.1 SIP', 'http://example.com/ SIP'), false],
    ['a NUL in its headers', invite().replace('Max-Forwards: 70', 'Max-Forwards: 7\u00000'), false],
    ['a malformed Via', invite().replace('Via: SIP/2.0/UDP 192.0.2.10:5060', 'Via: SIP/3.0 nowhere'), false],
  ])('refuses a message with %s, saying why, answerable: %s', (_what, text, answerable) => {
    const result = parseMessage(Buffer.from(text));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason.length).toBeGreaterThan(0);
    expect(result.request !== null).toBe(answerable);
  });

  it('cuts a datagram\'s body at its Content-Length (what follows is not the message\'s)', () => {
    const result = parseMessage(Buffer.from(`${invite()}trailing bytes`));
    expect(result.ok && result.message.body.toString()).toBe(SDP);
  });

  it('never throws, whatever bytes arrive', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), (bytes) => {
        const result = parseMessage(Buffer.from(bytes));
        expect(typeof result.ok).toBe('boolean');
      }),
      { numRuns: scaledRuns(2000) },
    );
  });

  it('never throws on a real INVITE cut, spliced or with bytes changed, and what it reads back is what was sent', () => {
    const original = Buffer.from(invite());
    const damage = fc.oneof(
      fc.record({ kind: fc.constant('cut' as const), at: fc.nat(original.length) }),
      fc.record({ kind: fc.constant('flip' as const), at: fc.nat(original.length - 1), value: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant('insert' as const), at: fc.nat(original.length), bytes: fc.uint8Array({ maxLength: 40 }) }),
      fc.record({ kind: fc.constant('text' as const), at: fc.nat(original.length), text: fc.constantFrom('\r\n', '\r\n\r\n', ':', ';', '<', '>', ',', ' ', '\t', 'Content-Length: 99999\r\n', 'v: x\r\n', '"') }),
    );
    fc.assert(
      fc.property(fc.array(damage, { minLength: 1, maxLength: 4 }), (damages) => {
        let bytes = Buffer.from(original);
        for (const d of damages) {
          const at = Math.min(d.at, bytes.length);
          if (d.kind === 'cut') bytes = bytes.subarray(0, at);
          else if (d.kind === 'flip' && at < bytes.length) bytes[at] = d.value;
          else if (d.kind === 'insert') bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(d.bytes), bytes.subarray(at)]);
          else if (d.kind === 'text') bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(d.text), bytes.subarray(at)]);
        }
        const result = parseMessage(bytes);
        if (result.ok) {
          // Whatever was accepted serializes and reads back the same.
          const again = parseMessage(serialize(result.message));
          expect(again.ok).toBe(true);
          if (again.ok) expect(again.message.body.equals(result.message.body)).toBe(true);
        }
      }),
      { numRuns: scaledRuns(2000) },
    );
  });

  it('reads back what it writes, for any header values a peer may send', () => {
    const token = fc.stringMatching(/^[A-Za-z0-9.!%*_+`'~-]{1,20}$/);
    fc.assert(
      fc.property(fc.constantFrom('INVITE', 'BYE', 'OPTIONS', 'INFO', 'NOTIFY'), token, fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.uint8Array({ maxLength: 500 }), (method, tag, cseq, body) => {
        const request: SipRequest = {
          kind: 'request',
          method,
          uri: 'sip:1000@192.0.2.1',
          headers: [
            { name: 'via', value: `SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK${tag}` },
            { name: 'from', value: `<sip:a@192.0.2.10>;tag=${tag}` },
            { name: 'to', value: '<sip:1000@192.0.2.1>' },
            { name: 'call-id', value: `${tag}@host` },
            { name: 'cseq', value: `${cseq} ${method}` },
          ],
          body: Buffer.from(body),
        };
        const result = parseMessage(serialize(request), { stream: true });
        expect(result.ok).toBe(true);
        if (!result.ok || result.message.kind !== 'request') return;
        expect(result.message.method).toBe(method);
        expect(header(result.message, 'cseq')).toBe(`${cseq} ${method}`);
        expect(result.message.body.equals(Buffer.from(body))).toBe(true);
      }),
    );
  });

  it('answers an offer without PCMU or PCMA with 488, and one that is not SDP with 400', () => {
    expect(parseOffer(SDP.replace('RTP/AVP 0 8 101', 'RTP/AVP 18').replace('a=rtpmap:101 telephone-event/8000\r\n', 'a=rtpmap:18 G729/8000\r\n'))).toMatchObject({ ok: false, status: 488 });
    expect(parseOffer('hello')).toMatchObject({ ok: false, status: 400 });
    expect(parseOffer(SDP.replace('m=audio 40000', 'm=audio 0'))).toMatchObject({ ok: false, status: 488 });
    // The first G.711 the offer lists is taken: here PCMU (0) before PCMA (8).
    expect(parseOffer(SDP.replace('RTP/AVP 0 8 101', 'RTP/AVP 8 0'))).toMatchObject({ ok: true, offer: { law: 'alaw', payloadType: 8, telephoneEvent: null } });
  });
});
