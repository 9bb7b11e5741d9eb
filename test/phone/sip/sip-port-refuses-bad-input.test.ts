// What anyone on the network may send to the SIP port: truncated and oversized messages, header
// floods, lying Content-Lengths, garbage. Each is refused cleanly, with 400 where the sender can
// be told (its Via, From, To, Call-ID and CSeq were readable) and silently otherwise; the endpoint
// goes on answering OPTIONS, and the next real call (sipp) is taken as usual.
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { afterThisTest } from '../../support/after-this-test.ts';
import { listenForRtp, runSipp, useSipRig } from '../../support/sip-rig.ts';

const GOODBYE_YAML = `
id: goodbye
version: "1.0.0"
initial_state: bye
settings:
  base_system_prompt: You answer the phone.
states:
  bye:
    ui: { artifact_type: card, prompt: "Goodbye" }
    on_enter:
      say: Goodbye!
      end_session: true
    agent:
      prompt: Say goodbye.
`;

function request(method: string, options: { extra?: string[]; body?: string; length?: string; callId?: string } = {}): string {
  const body = options.body ?? '';
  return [
    `${method} sip:2000@127.0.0.1 SIP/2.0`,
    'Via: SIP/2.0/UDP 127.0.0.1:5999;branch=z9hG4bK-corpus-' + Math.random().toString(36).slice(2),
    'Max-Forwards: 70',
    'From: <sip:fuzzer@127.0.0.1>;tag=corpus',
    'To: <sip:2000@127.0.0.1>',
    `Call-ID: ${options.callId ?? `corpus-${Math.random().toString(36).slice(2)}`}`,
    `CSeq: 1 ${method}`,
    ...(options.extra ?? []),
    `Content-Length: ${options.length ?? Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}

const CORPUS: Array<{ what: string; bytes: Buffer; answer: number | null }> = [
  { what: 'an empty datagram', bytes: Buffer.alloc(0), answer: null },
  { what: 'random bytes', bytes: Buffer.from(Array.from({ length: 700 }, (_, i) => (i * 131 + 7) % 256)), answer: null },
  { what: 'a request cut inside its headers', bytes: Buffer.from(request('OPTIONS').slice(0, 90)), answer: null },
  { what: 'an INVITE whose Content-Length is longer than its body', bytes: Buffer.from(request('INVITE', { body: 'v=0\r\n', length: '400' })), answer: 400 },
  { what: 'a Content-Length that is not a number', bytes: Buffer.from(request('OPTIONS', { length: 'ten' })), answer: 400 },
  { what: 'a header flood', bytes: Buffer.from(request('OPTIONS', { extra: Array.from({ length: 200 }, (_, i) => `X-Flood-${i}: ${i}`) })), answer: null },
  { what: 'an oversized message', bytes: Buffer.from(request('OPTIONS', { extra: [`X-Big: ${'b'.repeat(40_000)}`] })), answer: null },
  { what: 'a CSeq for another method', bytes: Buffer.from(request('OPTIONS').replace('CSeq: 1 OPTIONS', 'CSeq: 1 INVITE')), answer: 400 },
  { what: 'a response no transaction of ours asked for', bytes: Buffer.from(request('OPTIONS').replace('OPTIONS sip:2000@127.0.0.1 SIP/2.0', 'SIP/2.0 200 OK')), answer: null },
  { what: 'an INVITE with an SDP body that is not SDP', bytes: Buffer.from(request('INVITE', { extra: ['Content-Type: application/sdp'], body: 'hello there' })), answer: 400 },
];

describe('the SIP port, sent bad input', () => {
  const rig = useSipRig({ llm: 'none', transcripts: [] });
  let bound: Promise<string> | null = null;

  it('refuses every malformed message cleanly, over UDP and TCP, and goes on taking calls', { timeout: 90_000 }, async () => {
    await (bound ??= rig().bind('2000', GOODBYE_YAML));
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    afterThisTest(() => new Promise<void>((resolve) => socket.close(() => resolve())));
    const received: string[] = [];
    socket.on('message', (data) => received.push(data.toString('utf8')));
    const send = (bytes: Buffer) => socket.send(bytes, rig().udpPort, '127.0.0.1');

    for (const { what, bytes, answer } of CORPUS) {
      received.length = 0;
      send(bytes);
      if (answer === null) {
        // Nothing comes back: then an OPTIONS shows the endpoint is still there and had said nothing.
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(received, what).toEqual([]);
      } else {
        // (An INVITE hears 100 Trying first, as every INVITE does.)
        const final = () => received.map((r) => r.split('\r\n')[0]!).filter((line) => !line.startsWith('SIP/2.0 100 '));
        await vi.waitFor(() => expect(final().length, what).toBeGreaterThan(0), { timeout: 5_000, interval: 20 });
        expect(final()[0], what).toMatch(new RegExp(`^SIP/2\\.0 ${answer} `));
      }
      received.length = 0;
      send(Buffer.from(request('OPTIONS')));
      await vi.waitFor(() => expect(received.some((r) => r.startsWith('SIP/2.0 200 ')), `OPTIONS after ${what}`).toBe(true), { timeout: 5_000, interval: 20 });
    }

    // Over TCP, a message without a Content-Length cannot be framed: it is answered 400 and the
    // connection closed; a stream of garbage past the size limit is cut off.
    for (const [what, bytes, expectAnswer] of [
      ['no Content-Length', Buffer.from(request('OPTIONS').replace(/Content-Length: \d+\r\n/, '')), true],
      ['endless headers', Buffer.from(`OPTIONS sip:2000@127.0.0.1 SIP/2.0\r\n${'X-Long: y\r\n'.repeat(3000)}`), false],
    ] as const) {
      const tcp = connect(rig().tcpPort, '127.0.0.1');
      afterThisTest(() => void tcp.destroy());
      let text = '';
      tcp.on('data', (chunk) => (text += chunk.toString('utf8')));
      tcp.on('error', () => {});
      const closed = new Promise<void>((resolve) => tcp.once('close', () => resolve()));
      tcp.write(bytes);
      await closed;
      if (expectAnswer) expect(text, what).toMatch(/^SIP\/2\.0 400 /);
      else expect(text, what).toBe('');
    }

    // The next real call is taken as any call is.
    const before = (await rig().server.request('GET', '/v1/sessions', { apiKey: rig().account.apiKey })).body.length;
    const ear = await listenForRtp();
    const run = await runSipp({ rig: rig(), scenario: 'hung-up-by-voxflow.xml', service: '2000', rtpPort: ear.port });
    expect(run.code, run.output).toBe(0);
    await vi.waitFor(
      async () => {
        const list = (await rig().server.request('GET', '/v1/sessions', { apiKey: rig().account.apiKey })).body;
        expect(list.length).toBe(before + 1);
        expect(list[0]).toMatchObject({ transport: 'sip', status: 'ended', end_reason: 'flow_ended' });
      },
      { timeout: 15_000, interval: 100 },
    );
  });
});
