import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { RTCPeerConnection } from 'werift';
import { candidateRefusal } from '../../server/transports/webrtc/candidate-filter.ts';
import { createAccount, startTestServer, type TestServer } from '../support/server.ts';

// A caller's ICE candidates name where the server sends STUN connectivity checks. Candidates on
// link-local (cloud metadata), multicast, host names, and the server's own loopback when it does
// not listen on loopback only, are dropped (docs/hosting.md#outbound-requests): the offer is
// answered and the PATCH succeeds, but the peer connection never gets them and no check is sent.

/** A UDP port on loopback that records STUN binding requests arriving at it. */
async function stunWatcher(): Promise<{ port: number; requests: () => number; close: () => void }> {
  const socket: Socket = createSocket('udp4');
  let requests = 0;
  socket.on('message', (message) => {
    // A STUN message: type 0x0001 (binding request) and the magic cookie 0x2112A442.
    if (message.length >= 20 && message.readUInt16BE(0) === 0x0001 && message.readUInt32BE(4) === 0x2112a442) requests++;
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { port: (socket.address() as AddressInfo).port, requests: () => requests, close: () => socket.close() };
}

/** A real offer (werift's), its own candidates replaced by `candidates`. */
async function offerWith(candidates: string[]): Promise<string> {
  const pc = new RTCPeerConnection({ iceUseIpv6: false });
  try {
    pc.addTransceiver('audio', { direction: 'sendrecv' });
    await pc.setLocalDescription(await pc.createOffer());
    const lines = pc.localDescription!.sdp.split('\r\n').filter((line) => !line.startsWith('a=candidate:') && line !== 'a=end-of-candidates');
    const audio = lines.findIndex((line) => line.startsWith('m=audio'));
    lines.splice(audio + 1, 0, ...candidates.map((c) => `a=${c}`));
    return lines.join('\r\n');
  } finally {
    await pc.close();
  }
}

const line = (n: number, address: string, port: number) => `candidate:${n} 1 udp 2130706431 ${address} ${port} typ host`;
const NEVER = (port: number) => [line(11, '169.254.169.254', port), line(12, '224.0.0.251', 5353), line(13, '239.255.255.250', 1900), line(14, 'metadata.google.internal', 80), line(15, '0.0.0.0', port), line(16, 'fe80::1', port), line(17, '::ffff:169.254.169.254', port)];

describe('remote ICE candidates the server never probes', () => {
  let hosted: TestServer;
  let local: TestServer;
  const watchers: Array<Awaited<ReturnType<typeof stunWatcher>>> = [];
  const given: string[] = [];
  let remoteSdp: MockInstance<RTCPeerConnection['setRemoteDescription']>;
  let addCandidate: MockInstance<RTCPeerConnection['addIceCandidate']>;

  beforeAll(async () => {
    // Records what the server hands its peer connections (werift is loaded once, in this process).
    remoteSdp = vi.spyOn(RTCPeerConnection.prototype, 'setRemoteDescription');
    addCandidate = vi.spyOn(RTCPeerConnection.prototype, 'addIceCandidate');
    const webrtc = { connectTimeoutMs: 60_000 };
    // A hosted server (listening beyond loopback), and the desktop's kind (loopback only).
    [hosted, local] = await Promise.all([startTestServer({ host: '0.0.0.0', publicUrl: 'https://voice.example.com' }, { webrtc }), startTestServer({}, { webrtc })]);
  });
  afterAll(async () => {
    remoteSdp?.mockRestore();
    addCandidate?.mockRestore();
    for (const watcher of watchers) watcher.close();
    await Promise.all([hosted?.close(), local?.close()]);
  });

  const watch = async () => {
    const watcher = await stunWatcher();
    watchers.push(watcher);
    return watcher;
  };
  const offer = async (server: TestServer, sdp: string): Promise<string> => {
    const { jwt } = await createAccount(server);
    const answered = await server.request('POST', `/offer?mode=assistant&access_token=${jwt}`, { body: { sdp, type: 'offer' } });
    expect(answered.status, answered.text).toBe(200);
    expect(answered.body.sdp).toMatch(/^v=0/);
    return answered.body.pc_id as string;
  };
  const sdpsGiven = () => remoteSdp.mock.calls.map((call) => String(call[0].sdp));
  const candidatesGiven = () => addCandidate.mock.calls.map((call) => String(call[0]?.candidate ?? ''));

  it('drops them from an offer: the answer comes, the peer connection never sees them, and no check reaches loopback on a hosted server', { timeout: 60_000 }, async () => {
    const [toHosted, toLocal] = [await watch(), await watch()];
    const publicCandidate = line(20, '203.0.113.9', 40_000);
    await offer(hosted, await offerWith([line(1, '127.0.0.1', toHosted.port), ...NEVER(toHosted.port), publicCandidate]));
    // The same loopback candidate, given to a server that listens on loopback only, is probed:
    // what the hosted server does not do below is its choice, not werift's.
    await offer(local, await offerWith([line(1, '127.0.0.1', toLocal.port), ...NEVER(toLocal.port)]));
    await vi.waitFor(() => expect(toLocal.requests()).toBeGreaterThan(0), { timeout: 30_000, interval: 200 });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(toHosted.requests()).toBe(0);

    const [hostedSdp, localSdp] = sdpsGiven().slice(-2);
    for (const refused of NEVER(toHosted.port)) expect(hostedSdp, refused).not.toContain(refused);
    expect(hostedSdp).not.toContain(`127.0.0.1 ${toHosted.port}`);
    expect(hostedSdp).toContain(publicCandidate);
    expect(localSdp).toContain(line(1, '127.0.0.1', toLocal.port));
    for (const refused of NEVER(toLocal.port)) expect(localSdp, refused).not.toContain(refused);
  });

  it('drops them from PATCH /offer: the PATCH succeeds, the peer connection never gets them, and nothing is probed', { timeout: 60_000 }, async () => {
    const [toHosted, toLocal] = [await watch(), await watch()];
    const hostedPc = await offer(hosted, await offerWith([]));
    const localPc = await offer(local, await offerWith([]));
    const before = candidatesGiven().length;
    const patch = (server: TestServer, pcId: string, candidates: string[]) =>
      server.request('PATCH', `/offer/${pcId}`, { body: { candidates: candidates.map((candidate) => ({ candidate, sdpMid: '0', sdpMLineIndex: 0 })) } });

    const publicCandidate = line(20, '198.51.100.20', 40_000);
    const hostedPatch = await patch(hosted, hostedPc, [line(1, '127.0.0.1', toHosted.port), ...NEVER(toHosted.port), publicCandidate]);
    expect(hostedPatch.status, hostedPatch.text).toBe(200);
    expect(hostedPatch.body).toEqual({ status: 'success' });
    const localPatch = await patch(local, localPc, [line(1, '127.0.0.1', toLocal.port), ...NEVER(toLocal.port)]);
    expect(localPatch.status, localPatch.text).toBe(200);

    await vi.waitFor(() => expect(toLocal.requests()).toBeGreaterThan(0), { timeout: 30_000, interval: 200 });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(toHosted.requests()).toBe(0);
    // What reached the peer connections: the hosted one got only the public candidate, the
    // loopback-only server the loopback one too, and neither any of the others.
    expect(candidatesGiven().slice(before)).toEqual([publicCandidate, line(1, '127.0.0.1', toLocal.port)]);
  });

  it('reads the address out of each form a candidate line comes in', () => {
    expect(candidateRefusal('a=candidate:1 1 udp 1 169.254.169.254 80 typ host', false)).toMatch(/link-local/);
    expect(candidateRefusal('candidate:1 1 UDP 1 ff02::1 80 typ host', false)).toMatch(/multicast/);
    expect(candidateRefusal('candidate:1 1 udp 1 127.0.0.1 80 typ host', false)).toMatch(/loopback/);
    expect(candidateRefusal('candidate:1 1 udp 1 127.0.0.1 80 typ host', true)).toBeNull();
    // Another range of the caller's own network is what ICE is for; an mDNS name is resolved on the local link only.
    expect(candidateRefusal('candidate:1 1 udp 1 192.168.1.20 50000 typ host', false)).toBeNull();
    expect(candidateRefusal('candidate:1 1 udp 1 9a1f6c3e-3c1e-4b9e-a2e4-1b2c3d4e5f60.local 50000 typ host', false)).toBeNull();
    expect(candidateRefusal('candidate:1 1 udp 1 203.0.113.5 3478 typ srflx raddr 169.254.1.1 rport 9', false)).toBeNull();
  });
});
