// POST /offer admits the session (flow, capacity, credit, its record) while werift prepares the
// answer, and answers only once both are done. What a client sees must not change with that: a
// session the server refuses gets its refusal and never an answer, whichever of the two finished
// first, and nothing of it stays behind (the peer's place, the account's place, a record left
// "connected"); an offer that is answered connects and its session starts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MediaStreamTrack, RTCPeerConnection } from 'werift';
import { expectError } from '../api/error-shape.ts';
import { afterThisTest } from '../support/after-this-test.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';

async function makePeer(): Promise<RTCPeerConnection> {
  const pc = new RTCPeerConnection({ iceUseIpv6: false, iceAdditionalHostAddresses: ['127.0.0.1'] });
  afterThisTest(() => pc.close());
  pc.addTransceiver(new MediaStreamTrack({ kind: 'audio' }), { direction: 'sendrecv' });
  await pc.setLocalDescription(await pc.createOffer());
  return pc;
}

/** Looks like SDP with an audio section, but no WebRTC stack can use it (no mid, no ICE, no DTLS). */
const UNUSABLE_SDP = 'v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=rtpmap:111 opus/48000/2\r\n';

describe('POST /offer: admission beside the answer', () => {
  let server: TestServer;
  let account: Awaited<ReturnType<typeof createAccount>>;
  let flowId: string;
  let offerSdp: string;

  beforeAll(async () => {
    // One peer connection at most: any place a refused offer kept would refuse the next one (503).
    server = await startTestServer({ engine: { maxPeerConnections: 1 } }, { webrtc: { connectTimeoutMs: 5_000 } });
    account = await createAccount(server);
    flowId = await createFlow(server, account.apiKey);
    const pc = new RTCPeerConnection({ iceUseIpv6: false });
    pc.addTransceiver('audio', { direction: 'sendrecv' });
    await pc.setLocalDescription(await pc.createOffer());
    offerSdp = pc.localDescription!.sdp;
    await pc.close();
  });
  afterAll(async () => {
    await server?.close();
  });

  const post = (query: string, sdp: string, credential: { apiKey: string }) => server.request('POST', `/offer?${query}`, { ...credential, body: { sdp, type: 'offer' } });
  const sessionsOf = async (who: { apiKey: string }) => (await server.request('GET', '/v1/sessions', who)).body as Array<{ status: string; end_reason: string | null; transport: string }>;

  it('refuses an unknown flow and an account without credit with no answer, and keeps no place for them', async () => {
    const unknown = await post('mode=flow&program_id=flow_nope', offerSdp, account);
    expectError(unknown, 404, 'flow_not_found');
    expect(unknown.body.sdp).toBeUndefined();

    // Credit is checked only where sessions cost something: a server with hosted providers it pays for.
    const paid = await startTestServer(
      { engine: { maxPeerConnections: 1 }, providers: { stt: { provider: 'deepgram', apiKey: 'dg-server' }, llm: { provider: 'openai', apiKey: 'sk-server' }, tts: { provider: 'openai', apiKey: 'sk-server' } } },
      { webrtc: { connectTimeoutMs: 5_000 } },
    );
    afterThisTest(() => paid.close());
    const broke = await createAccount(paid);
    const brokeId = (await paid.app.services.store.accounts.findByEmail(broke.email))!.id;
    const balance = await paid.app.services.store.credits.balance(brokeId);
    expect((await paid.app.services.store.credits.debit(brokeId, balance - 1, { idempotencyKey: 'drain' })).ok).toBe(true);
    const brokeFlow = await createFlow(paid, broke.apiKey);
    const poor = await paid.request('POST', `/offer?mode=flow&program_id=${brokeFlow}`, { apiKey: broke.apiKey, body: { sdp: offerSdp, type: 'offer' } });
    expectError(poor, 402, 'insufficient_credits');
    expect(poor.body.sdp).toBeUndefined();
    expect((await paid.request('GET', '/v1/sessions', { apiKey: broke.apiKey })).body).toEqual([]);
    // Its one peer place was given back: the next offer there (refused only for its flow) is not turned away as at capacity.
    expectError(await paid.request('POST', '/offer?mode=flow&program_id=flow_nope', { apiKey: broke.apiKey, body: { sdp: offerSdp, type: 'offer' } }), 404, 'flow_not_found');

    // The one peer place is free again at once: the next offer is answered.
    const next = await post(`mode=flow&program_id=${flowId}`, offerSdp, account);
    expect(next.status).toBe(200);
    expect(next.body).toMatchObject({ type: 'answer', sdp: expect.stringMatching(/^v=0/) });
  });

  it("tells a refused flow before an SDP it cannot use, as when the SDP was read only after admission", async () => {
    // The previous answered offer holds the place until it gives up connecting: wait for that.
    let refused;
    await expect.poll(async () => (refused = await post('mode=flow&program_id=flow_nope', UNUSABLE_SDP, account)).status, { timeout: 20_000, interval: 500 }).not.toBe(503);
    expectError(refused!, 404, 'flow_not_found');
  });

  it('ends the session record of an admitted offer whose SDP werift cannot use, and gives its place back', async () => {
    const fresh = await createAccount(server);
    const freshFlow = await createFlow(server, fresh.apiKey);
    let bad;
    await expect.poll(async () => (bad = await post(`mode=flow&program_id=${freshFlow}`, UNUSABLE_SDP, fresh)).status, { timeout: 20_000, interval: 500 }).not.toBe(503);
    expectError(bad!, 400, 'bad_request');
    expect(bad!.body.error.message).toMatch(/SDP offer could not be used/);
    expect(await sessionsOf(fresh)).toEqual([expect.objectContaining({ transport: 'webrtc', status: 'ended', end_reason: 'refused' })]);
    // Its place was given back along with it: an offer right after is answered.
    const pc = await makePeer();
    const good = await post(`mode=flow&program_id=${freshFlow}`, pc.localDescription!.sdp, fresh);
    expect(good.status).toBe(200);
  });

  // Two waits of up to 20 s each (the answer, then the connection): more than the default 20 s when busy.
  it('connects an answered offer and starts its session, whose events reach the client', { timeout: 60_000 }, async () => {
    const fresh = await createAccount(server);
    const freshFlow = await createFlow(server, fresh.apiKey);
    const pc = new RTCPeerConnection({ iceUseIpv6: false, iceAdditionalHostAddresses: ['127.0.0.1'] });
    afterThisTest(() => pc.close());
    pc.addTransceiver(new MediaStreamTrack({ kind: 'audio' }), { direction: 'sendrecv' });
    const events = pc.createDataChannel('events');
    const received: string[] = [];
    events.onMessage.subscribe((data) => received.push((JSON.parse(typeof data === 'string' ? data : data.toString('utf8')) as { type: string }).type));
    await pc.setLocalDescription(await pc.createOffer());
    let answer;
    await expect.poll(async () => (answer = await post(`mode=flow&program_id=${freshFlow}`, pc.localDescription!.sdp, fresh)).status, { timeout: 20_000, interval: 500 }).toBe(200);
    await pc.setRemoteDescription({ type: 'answer', sdp: answer!.body.sdp });
    await expect.poll(() => received, { timeout: 20_000, interval: 200 }).toContain('session_started');
    expect(await sessionsOf(fresh)).toEqual([expect.objectContaining({ transport: 'webrtc', status: 'connected' })]);
  });
});
