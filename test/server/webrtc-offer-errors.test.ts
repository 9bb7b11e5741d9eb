import { createHmac } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RTCPeerConnection } from 'werift';
import { expectError } from '../api/error-shape.ts';
import { createAccount, createFlow, startTestServer, type TestResponse, type TestServer } from '../support/server.ts';

// What a WebRTC client is told when its offer cannot be taken, over plain HTTP: each refusal is
// the API's error body with a status that says what to fix. And what /ice-servers hands out.

/** A real SDP offer with an audio section, as any WebRTC stack makes it (werift here). */
async function makeOffer(): Promise<{ sdp: string; close(): Promise<void> }> {
  const pc = new RTCPeerConnection({ iceUseIpv6: false });
  pc.addTransceiver('audio', { direction: 'sendrecv' });
  await pc.setLocalDescription(await pc.createOffer());
  return { sdp: pc.localDescription!.sdp, close: () => pc.close() };
}

describe('POST /offer refusals and GET /ice-servers', () => {
  let server: TestServer;
  let account: Awaited<ReturnType<typeof createAccount>>;
  let flowId: string;
  let offer: Awaited<ReturnType<typeof makeOffer>>;

  beforeAll(async () => {
    // One peer connection at most; an unanswered one gives up after a second.
    [server, offer] = await Promise.all([startTestServer({ engine: { maxPeerConnections: 1 } }, { webrtc: { connectTimeoutMs: 1_000 } }), makeOffer()]);
    account = await createAccount(server);
    flowId = await createFlow(server, account.apiKey);
  });
  afterAll(async () => {
    await offer?.close();
    await server?.close();
  });

  const post = (query: string, body: unknown) => server.request('POST', `/offer?${query}`, { body });
  const withJwt = (query: string) => `${query}&access_token=${account.jwt}`;

  it('refuses mode=flow without program_id (422), an unknown program_id (404) and a missing credential (401)', async () => {
    const missing = await post(withJwt('mode=flow'), { sdp: offer.sdp, type: 'offer' });
    expectError(missing, 422, 'invalid_request');
    expect(missing.body.error.message).toMatch(/program_id/);
    const unknown = await post(withJwt('mode=flow&program_id=flow_nope'), { sdp: offer.sdp, type: 'offer' });
    expectError(unknown, 404, 'flow_not_found');
    expect(unknown.body.error.message).toContain('flow_nope');
    expectError(await post(`mode=flow&program_id=${flowId}`, { sdp: offer.sdp, type: 'offer' }), 401, 'missing_credentials');
    expectError(await post(`mode=flow&program_id=${flowId}&access_token=not-a-jwt`, { sdp: offer.sdp, type: 'offer' }), 401, 'invalid_credentials');
  });

  it('refuses malformed SDP (400) and an SDP of type "answer" (422)', async () => {
    const query = withJwt(`mode=flow&program_id=${flowId}`);
    const notSdp = await post(query, { sdp: 'hello, I am not SDP', type: 'offer' });
    expectError(notSdp, 400, 'bad_request');
    expect(notSdp.body.error.message).toMatch(/SDP/);
    // Looks like SDP with an audio section, but no WebRTC stack can use it (no mid, no ICE, no DTLS).
    const unusable = 'v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=rtpmap:111 opus/48000/2\r\n';
    expectError(await post(query, { sdp: unusable, type: 'offer' }), 400, 'bad_request');
    const answer = await post(query, { sdp: offer.sdp, type: 'answer' });
    expectError(answer, 422, 'invalid_request');
    expect(answer.body.error.message).toMatch(/offer/);
  });

  it('a session token is only checked by /ice-servers, opens one offer, and is refused after that (401)', async () => {
    const started = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: { flow_id: flowId } });
    const token = started.body.session_token as string;
    expect((await server.request('GET', `/ice-servers?session_token=${token}`)).status).toBe(200);
    expect((await post(`session_token=${token}`, { sdp: offer.sdp, type: 'offer' })).status).toBe(200);
    // The cap (1 here) is checked before the token, so that a 503 never uses one up: wait for the
    // unconnected peer to give its slot back, then the used token itself is refused.
    let again: TestResponse | undefined;
    await expect.poll(async () => (again = await post(`session_token=${token}`, { sdp: offer.sdp, type: 'offer' })).status, { timeout: 5_000, interval: 300 }).not.toBe(503);
    expectError(again!, 401, 'session_token_invalid');
  });

  it('refuses an offer past the peer-connection cap with 503, and takes one again once the slot frees', async () => {
    const query = withJwt(`mode=flow&program_id=${flowId}`);
    // The previous test's peer may still hold the one slot for up to a second.
    let first: TestResponse | undefined;
    await expect.poll(async () => (first = await post(query, { sdp: offer.sdp, type: 'offer' })).status, { timeout: 5_000, interval: 300 }).toBe(200);
    expect(first!.body).toMatchObject({ type: 'answer', pc_id: expect.stringMatching(/^pc_/), sdp: expect.stringMatching(/^v=0/) });
    const second = await post(query, { sdp: offer.sdp, type: 'offer' });
    expectError(second, 503, 'at_capacity');
    // Nobody completes the first connection: it times out and its slot is given back.
    await expect.poll(async () => (await post(query, { sdp: offer.sdp, type: 'offer' })).status, { timeout: 5_000, interval: 300 }).toBe(200);
    // And its session is recorded as ended, not left 'connected' for ever.
    const sessions = await server.request('GET', '/v1/sessions', { jwt: account.jwt });
    expect(sessions.body).toContainEqual(expect.objectContaining({ transport: 'webrtc', status: 'ended', end_reason: 'connect_timeout' }));
  });

  it('GET /ice-servers answers an empty list when no STUN or TURN is configured, and needs a credential', async () => {
    const ice = await server.request('GET', '/ice-servers', { jwt: account.jwt });
    expect(ice.status).toBe(200);
    expect(ice.body).toEqual({ iceServers: [], ttlSeconds: 3600 });
    expectError(await server.request('GET', '/ice-servers'), 401, 'missing_credentials');
  });

  it('GET /ice-servers hands out STUN URLs and TURN REST credentials that the TURN server can check with its secret', async () => {
    const secret = 'turn-shared-secret';
    const stun = 'stun:stun.example.test:3478';
    const turns = ['turn:turn.example.test:3478?transport=udp', 'turns:turn.example.test:5349?transport=tcp'];
    const iceServer = await startTestServer({ ice: { stunUrls: [stun], turnUrls: turns, turnSecret: secret } });
    try {
      const owner = await createAccount(iceServer);
      const accountId = decodeJwt(owner.jwt).sub!;
      const before = Math.floor(Date.now() / 1000);
      const ice = await iceServer.request('GET', '/ice-servers', { apiKey: owner.apiKey });
      const after = Math.floor(Date.now() / 1000);
      expect(ice.status).toBe(200);
      expect(ice.body.ttlSeconds).toBe(3600);
      expect(ice.body.iceServers.map((s: { urls: string }) => s.urls)).toEqual([stun, ...turns]);
      expect(ice.body.iceServers[0]).toEqual({ urls: stun });
      for (const entry of ice.body.iceServers.slice(1)) {
        const [expiry, user] = (entry.username as string).split(':');
        expect(user).toBe(accountId);
        expect(Number(expiry)).toBeGreaterThanOrEqual(before + 3600);
        expect(Number(expiry)).toBeLessThanOrEqual(after + 3600);
        expect(entry.credential).toBe(createHmac('sha1', secret).update(entry.username).digest('base64'));
      }
    } finally {
      await iceServer.close();
    }
  });
});
