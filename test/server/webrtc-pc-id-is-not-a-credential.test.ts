// A pc_id lets its holder add ICE candidates and nothing more. Renegotiating or
// restarting the peer (Pipecat's restart_pc) needs the principal that opened it; a stranger gets
// the same 404 as for an unknown peer (no credential at all: 401), and no session is started or
// billed for them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RTCPeerConnection } from 'werift';
import { redactUrl } from '../../server/app.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';

async function makeOffer(): Promise<{ sdp: string; close(): Promise<void> }> {
  const pc = new RTCPeerConnection({ iceUseIpv6: false });
  pc.addTransceiver('audio', { direction: 'sendrecv' });
  await pc.setLocalDescription(await pc.createOffer());
  return { sdp: pc.localDescription!.sdp, close: () => pc.close() };
}

let server: TestServer;
let owner: Awaited<ReturnType<typeof createAccount>>;
let stranger: Awaited<ReturnType<typeof createAccount>>;
let flowId: string;
let offer: Awaited<ReturnType<typeof makeOffer>>;

beforeAll(async () => {
  [server, offer] = await Promise.all([startTestServer({}, { webrtc: { connectTimeoutMs: 5_000 } }), makeOffer()]);
  [owner, stranger] = await Promise.all([createAccount(server), createAccount(server)]);
  flowId = await createFlow(server, owner.apiKey);
});
afterAll(async () => {
  await offer?.close();
  await server?.close();
});

const openPeer = async () => {
  const response = await server.request('POST', `/offer?mode=flow&program_id=${flowId}`, { jwt: owner.jwt, body: { sdp: offer.sdp, type: 'offer' } });
  expect(response.status).toBe(200);
  return response.body.pc_id as string;
};
const sessionsOf = async (account: typeof owner) => (await server.request('GET', '/v1/sessions', { jwt: account.jwt })).body as unknown[];

describe('a pc_id', () => {
  it('does not restart a peer without a credential, nor with another account’s', async () => {
    const pcId = await openPeer();
    const before = (await sessionsOf(owner)).length;
    const bare = await server.request('POST', `/offer?mode=flow&program_id=${flowId}`, { body: { sdp: offer.sdp, type: 'offer', pc_id: pcId, restart_pc: true } });
    expect(bare.status).toBe(401);
    const foreign = await server.request('POST', `/offer?mode=flow&program_id=${flowId}`, {
      apiKey: stranger.apiKey,
      body: { sdp: offer.sdp, type: 'offer', pc_id: pcId, restart_pc: true },
    });
    expect(foreign.status).toBe(404);
    expect((await sessionsOf(owner)).length).toBe(before);
    expect(await sessionsOf(stranger)).toEqual([]);
  });

  it('does not renegotiate a peer for a stranger either', async () => {
    const pcId = await openPeer();
    const renegotiate = await server.request('POST', '/offer', { apiKey: stranger.apiKey, body: { sdp: offer.sdp, type: 'offer', pc_id: pcId } });
    expect(renegotiate.status).toBe(404);
  });

  it("restarts for the peer's owner, who keeps the pc_id", async () => {
    const pcId = await openPeer();
    const restarted = await server.request('POST', `/offer?mode=flow&program_id=${flowId}`, { jwt: owner.jwt, body: { sdp: offer.sdp, type: 'offer', pc_id: pcId, restart_pc: true } });
    expect(restarted.status).toBe(200);
    expect(restarted.body.pc_id).toBe(pcId);
  });

  it('appears in request logs only as its first characters', () => {
    const pcId = 'pc_AbCdEfGhIjKlMnOpQrStUv';
    expect(redactUrl(`/offer/${pcId}`)).toBe('/offer/pc_AbCdEf…');
    expect(redactUrl(`/offer/${pcId}`)).not.toContain('GhIj');
  });
});
