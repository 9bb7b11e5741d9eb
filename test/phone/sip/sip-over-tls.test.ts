// SIP over TLS: `--sip-listen tls:…` with `--sip-tls-cert` and `--sip-tls-key`. A caller that
// trusts only the certificate made for this test (self-signed by openssl, for 127.0.0.1) places a
// call over TLS (this machine's sipp has no TLS, so the caller here is a TLS client that speaks
// SIP), hears the flow's greeting in RTP, and hangs up; our answer's Contact says transport=tls.
// A tls: listener without its certificate and key, or with files that cannot be read or do not
// belong together, stops the server at start with a message naming the setting.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { describe, expect, it, vi } from 'vitest';
import { decodeG711 } from '../../../server/audio/g711.ts';
import { dbfs } from '../../../server/audio/pcm.ts';
import { afterThisFile, afterThisTest } from '../../support/after-this-test.ts';
import { PHONE_MENU_YAML } from '../../support/phone-menu-flow.ts';
import { startTestServer } from '../../support/server.ts';
import { listenForRtp, startSipRig, type SipRig } from '../../support/sip-rig.ts';
import { RIG_START_TIMEOUT_MS } from '../../support/voice-server.ts';

async function makeCertificate(): Promise<{ dir: string; certFile: string; keyFile: string; cert: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'voxflow-sip-tls-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=voxflow-test', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  return { dir, certFile, keyFile, cert: readFileSync(certFile, 'utf8') };
}

let setup: Promise<{ rig: SipRig; cert: string; dir: string }> | null = null;
function ready() {
  return (setup ??= (async () => {
    const made = await makeCertificate();
    afterThisFile(() => rm(made.dir, { recursive: true, force: true }));
    const rig = await startSipRig({ llm: 'none', transcripts: [], tls: { certFile: made.certFile, keyFile: made.keyFile } });
    afterThisFile(() => rig.close());
    await rig.bind('1000', PHONE_MENU_YAML);
    return { rig, cert: made.cert, dir: made.dir };
  })());
}

/** A SIP caller over one TLS connection: sends requests, reads messages framed by Content-Length. */
class TlsSipCaller {
  private buffer = Buffer.alloc(0);
  private readonly waiting: Array<(message: string) => void> = [];
  private readonly messages: string[] = [];
  constructor(readonly socket: TLSSocket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      for (;;) {
        const end = this.buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(this.buffer.subarray(0, end).toString('latin1'))?.[1] ?? 0);
        if (this.buffer.length < end + 4 + length) return;
        const message = this.buffer.subarray(0, end + 4 + length).toString('utf8');
        this.buffer = this.buffer.subarray(end + 4 + length);
        const next = this.waiting.shift();
        if (next) next(message);
        else this.messages.push(message);
      }
    });
  }

  send(text: string): void {
    this.socket.write(text);
  }

  next(): Promise<string> {
    const ready = this.messages.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The next message that is not a provisional response. */
  async final(): Promise<string> {
    for (;;) {
      const message = await this.next();
      if (!/^SIP\/2\.0 1\d\d/.test(message)) return message;
    }
  }
}

function request(method: string, uri: string, headers: string[], body = ''): string {
  return [`${method} ${uri} SIP/2.0`, ...headers, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n');
}

describe('SIP over TLS', () => {
  it('takes a call over TLS with its certificate: the caller hears the flow and hangs up', { timeout: RIG_START_TIMEOUT_MS + 60_000 }, async () => {
    const { rig, cert } = await ready();
    const ear = await listenForRtp();
    const socket = connect({ host: '127.0.0.1', port: rig.tlsPort, ca: cert });
    afterThisTest(() => void socket.destroy());
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', resolve);
      socket.once('error', reject);
    });
    // The server's certificate was checked against the one made here (the connection is authorized).
    expect(socket.authorized).toBe(true);
    const caller = new TlsSipCaller(socket);
    const local = `127.0.0.1:${socket.localPort}`;
    const callId = `${randomBytes(8).toString('hex')}@tls-caller`;
    const from = `<sip:+15550100001@127.0.0.1>;tag=${randomBytes(4).toString('hex')}`;
    const sdp = ['v=0', 'o=caller 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${ear.port} RTP/AVP 0`, 'a=rtpmap:0 PCMU/8000', 'a=sendrecv', ''].join('\r\n');
    const uri = `sip:1000@127.0.0.1:${rig.tlsPort};transport=tls`;
    const via = () => `Via: SIP/2.0/TLS ${local};branch=z9hG4bK${randomBytes(6).toString('hex')};rport`;
    caller.send(request('INVITE', uri, [via(), 'Max-Forwards: 70', `From: ${from}`, `To: <sip:1000@127.0.0.1>`, `Call-ID: ${callId}`, 'CSeq: 1 INVITE', `Contact: <sip:caller@${local};transport=tls>`, 'Content-Type: application/sdp'], sdp));
    const answer = await caller.final();
    expect(answer).toMatch(/^SIP\/2\.0 200/);
    expect(answer).toMatch(/\r\nContact: <sip:voxflow@127\.0\.0\.1:\d+;transport=tls>/i);
    const to = /\r\nTo: ([^\r\n]+)/i.exec(answer)![1]!;
    caller.send(request('ACK', uri, [via(), 'Max-Forwards: 70', `From: ${from}`, `To: ${to}`, `Call-ID: ${callId}`, 'CSeq: 1 ACK']));
    // The greeting ("Press 1 …") arrives as RTP at the address in our SDP.
    await vi.waitFor(
      () => {
        const pcm = decodeG711('mulaw', Buffer.concat(ear.packets.filter((p) => p.payloadType === 0).map((p) => p.payload)));
        let top = -Infinity;
        for (let at = 0; at + 1_600 <= pcm.length; at += 1_600) top = Math.max(top, dbfs(pcm.subarray(at, at + 1_600)));
        expect(top).toBeGreaterThan(-40);
      },
      { timeout: 30_000, interval: 200 },
    );
    caller.send(request('BYE', uri, [via(), 'Max-Forwards: 70', `From: ${from}`, `To: ${to}`, `Call-ID: ${callId}`, 'CSeq: 2 BYE']));
    expect(await caller.final()).toMatch(/^SIP\/2\.0 200/);
    // The rig's only call: this one, its Call-ID ours.
    const sessions = (await rig.server.request('GET', '/v1/sessions', { apiKey: rig.account.apiKey })).body as Array<{ id: string; transport: string }>;
    const session = sessions.find((s) => s.transport === 'sip');
    expect(session).toBeDefined();
    await vi.waitFor(
      async () =>
        expect((await rig.server.request('GET', `/v1/sessions/${session!.id}`, { apiKey: rig.account.apiKey })).body).toMatchObject({ status: 'ended', end_reason: 'caller_hung_up', carrier_call_id: callId }),
      { timeout: 20_000, interval: 100 },
    );
  });

  it('refuses to start a tls: listener without a usable certificate and key, saying which setting', { timeout: 120_000 }, async () => {
    const made = await makeCertificate();
    afterThisTest(() => rm(made.dir, { recursive: true, force: true }));
    const start = (sip: Record<string, unknown>) => startTestServer({ sip: { listen: ['tls:127.0.0.1:0'], rtpPorts: '0', ...sip } }).then(async (server) => {
      await server.close();
      throw new Error('the server started');
    });
    await expect(start({})).rejects.toThrow(/tls: listener: set VOXFLOW_SIP_TLS_CERT and VOXFLOW_SIP_TLS_KEY/);
    await expect(start({ tlsCert: join(made.dir, 'missing.pem'), tlsKey: made.keyFile })).rejects.toThrow(/VOXFLOW_SIP_TLS_CERT: cannot read ".*missing\.pem" \(no such file\)/);
    // A key that is not the certificate's: refused, and the error repeats nothing of the key.
    const other = await makeCertificate();
    afterThisTest(() => rm(other.dir, { recursive: true, force: true }));
    const refused = await start({ tlsCert: made.certFile, tlsKey: other.keyFile }).catch((error: Error) => error);
    expect(refused.message).toMatch(/are not a PEM certificate and its private key/);
    const keyBody = readFileSync(other.keyFile, 'utf8').split('\n')[1]!;
    expect(refused.message).not.toContain(keyBody.slice(0, 20));
    await writeFile(join(made.dir, 'junk.pem'), 'not a certificate\n');
    await expect(start({ tlsCert: join(made.dir, 'junk.pem'), tlsKey: made.keyFile })).rejects.toThrow(/are not a PEM certificate and its private key/);
  });
});
