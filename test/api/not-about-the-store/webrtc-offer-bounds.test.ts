import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RTCPeerConnection } from 'werift';
import { MAX_CANDIDATES_PER_PEER, MAX_MEDIA_SECTIONS, MAX_PATCHES_PER_WINDOW, MAX_SDP_BYTES } from '../../../server/transports/webrtc/sdp-bounds.ts';
import { createAccount, startTestServer, type TestServer } from '../../support/server.ts';
import { makeOffer } from '../admission-clients.ts';
import { expectError } from '../error-shape.ts';

// What a WebRTC client may make the server's signalling work through, bounded before werift
// sees it: werift's work runs on the thread that paces every call's audio, and the issue
// measured a 1.2 s stall for one offer of 500 m= lines and 2 s for 60 PATCHes of 50 candidates.

/** The offer's session part with `n` small audio sections (500 fit in 60 KiB, as in the issue). */
function withMediaSections(sdp: string, n: number): string {
  const session = sdp.split(/\r\n(?=m=)/)[0]!.replace(/a=group:BUNDLE[^\r\n]*/, `a=group:BUNDLE ${Array.from({ length: n }, (_, i) => i).join(' ')}`);
  const credentials = [/a=ice-ufrag:[^\r\n]*/, /a=ice-pwd:[^\r\n]*/, /a=fingerprint:[^\r\n]*/].map((line) => sdp.match(line)![0]).join('\r\n');
  const section = (mid: number) => `m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=mid:${mid}\r\na=sendrecv\r\na=rtcp-mux\r\na=rtpmap:111 opus/48000/2\r\n`;
  return `${session}\r\n${credentials}\r\n${Array.from({ length: n }, (_, i) => section(i)).join('')}`;
}

/** Remote candidates the offer itself carries (werift gathers before it offers). */
function candidatesIn(sdp: string): number {
  return sdp.match(/^a=candidate:/gm)?.length ?? 0;
}

function hostCandidates(count: number, from = 0): Array<{ candidate: string; sdpMid: string; sdpMLineIndex: number }> {
  return Array.from({ length: count }, (_, i) => ({
    candidate: `candidate:${from + i} 1 udp 2130706431 10.20.${Math.floor((from + i) / 250)}.${((from + i) % 250) + 1} ${40_000 + from + i} typ host`,
    sdpMid: '0',
    sdpMLineIndex: 0,
  }));
}

describe('bounds on WebRTC signalling', () => {
  let server: TestServer;
  let jwt: string;
  let offer: Awaited<ReturnType<typeof makeOffer>>;

  beforeAll(async () => {
    [server, offer] = await Promise.all([startTestServer({ engine: { maxPeerConnections: 20 } }, { webrtc: { connectTimeoutMs: 30_000 } }), makeOffer()]);
    jwt = (await createAccount(server)).jwt;
  });
  afterAll(async () => {
    await offer?.close();
    await server?.close();
  });

  const postOffer = (sdp: string) => server.request('POST', `/offer?mode=assistant&access_token=${jwt}`, { body: { sdp, type: 'offer' } });
  const newPeer = async (): Promise<string> => {
    const answered = await postOffer(offer.sdp);
    expect(answered.status).toBe(200);
    return answered.body.pc_id as string;
  };
  const patch = (pcId: string, candidates: unknown[]) => server.request('PATCH', `/offer/${pcId}`, { body: { candidates } });

  it('refuses an offer of 500 m= lines (or 5) with 400 sdp_too_complex, saying how many it had and may have; 4 are answered', async () => {
    const refused = await postOffer(withMediaSections(offer.sdp, 500));
    expectError(refused, 400, 'sdp_too_complex');
    expect(refused.body.error.message).toContain('500 media sections');
    expect(refused.body.error.message).toContain(`at most ${MAX_MEDIA_SECTIONS}`);
    expectError(await postOffer(withMediaSections(offer.sdp, MAX_MEDIA_SECTIONS + 1)), 400, 'sdp_too_complex');

    // A browser-like offer of audio, video and data (4 sections) is still answered.
    const pc = new RTCPeerConnection({ iceUseIpv6: false });
    try {
      pc.addTransceiver('audio', { direction: 'sendrecv' });
      pc.addTransceiver('video', { direction: 'recvonly' });
      pc.addTransceiver('video', { direction: 'recvonly' });
      pc.createDataChannel('events');
      await pc.setLocalDescription(await pc.createOffer());
      const sdp = pc.localDescription!.sdp;
      expect(sdp.match(/^m=/gm)).toHaveLength(MAX_MEDIA_SECTIONS);
      const answered = await postOffer(sdp);
      expect(answered.status, answered.text).toBe(200);
    } finally {
      await pc.close();
    }
  });

  it(`refuses an offer over ${MAX_SDP_BYTES / 1024} KiB, or carrying more than ${MAX_CANDIDATES_PER_PEER} candidates, with 400 sdp_too_complex`, async () => {
    const padded = `${offer.sdp}${'a=x-padding:0123456789abcdef0123456789abcdef0123456789abcdef\r\n'.repeat(Math.ceil(MAX_SDP_BYTES / 60))}`;
    const tooBig = await postOffer(padded);
    expectError(tooBig, 400, 'sdp_too_complex');
    expect(tooBig.body.error.message).toMatch(/bytes/);
    const lines = hostCandidates(MAX_CANDIDATES_PER_PEER + 1 - candidatesIn(offer.sdp)).map((c) => `a=${c.candidate}\r\n`).join('');
    const tooManyCandidates = await postOffer(`${offer.sdp}${lines}`);
    expectError(tooManyCandidates, 400, 'sdp_too_complex');
    expect(tooManyCandidates.body.error.message).toContain(`${MAX_CANDIDATES_PER_PEER + 1} ICE candidates`);
  });

  it(`takes ${MAX_CANDIDATES_PER_PEER} ICE candidates per peer in all, across PATCHes; past that 400 sdp_too_complex, and an end-of-candidates marker does not count`, async () => {
    const pcId = await newPeer();
    // The offer's own candidates count too.
    expect((await patch(pcId, hostCandidates(50))).status).toBe(200);
    expect((await patch(pcId, hostCandidates(MAX_CANDIDATES_PER_PEER - 50 - candidatesIn(offer.sdp), 50))).status).toBe(200);
    expect((await patch(pcId, [{ candidate: '', sdpMid: '0', sdpMLineIndex: 0 }])).status).toBe(200);
    const over = await patch(pcId, hostCandidates(1, 100));
    expectError(over, 400, 'sdp_too_complex');
    expect(over.body.error.message).toContain(`at most ${MAX_CANDIDATES_PER_PEER} ICE candidates`);
    // Another peer has its own count.
    expect((await patch(await newPeer(), hostCandidates(50))).status).toBe(200);
  });

  it(`takes ${MAX_PATCHES_PER_WINDOW} PATCHes per peer in 10 s; the next gets 429 rate_limited with Retry-After, another peer is unaffected`, async () => {
    const pcId = await newPeer();
    for (let i = 0; i < MAX_PATCHES_PER_WINDOW; i++) expect((await patch(pcId, hostCandidates(1, i))).status).toBe(200);
    const limited = await patch(pcId, hostCandidates(1, 99));
    expectError(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(10);
    expect((await patch(await newPeer(), hostCandidates(1))).status).toBe(200);
  });

  it('60 PATCHes of 50 candidates in a row: the first is taken, every other is refused', { timeout: 20_000 }, async () => {
    const pcId = await newPeer();
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await patch(pcId, hostCandidates(50, i * 50))).status);
    expect(statuses[0]).toBe(200);
    expect(statuses.slice(1).every((status) => status === 400 || status === 429)).toBe(true);
    expect(statuses.filter((status) => status === 429).length).toBe(60 - MAX_PATCHES_PER_WINDOW);
  });
});
