import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../api/error-shape.ts';
import { GUESSING_GAME_RULES, startVoiceRig, type VoiceRig } from '../support/voice-server.ts';
import { launchChromium, tempDir, writeMicWav, type TestBrowser } from './browser.ts';

type Signalling = 'non-trickle' | 'trickle-camel' | 'trickle-snake' | 'no-candidates';

interface Outcome {
  offerCandidates: number;
  patchStatuses: number[];
  patchedCandidates: number;
  connectionState: string;
  events: string[];
}

/**
 * Runs one offer/answer exchange in the browser. The browser ignores the candidates of the
 * server's answer, so it cannot reach the server by itself: the connection forms only when the
 * server learned the browser's candidates — from the offer's SDP (non-trickle) or from the PATCH
 * calls (trickle) — and checks them. With neither, nothing connects.
 */
function exchange(page: Page, signalling: Signalling, query: string, waitMs: number): Promise<Outcome> {
  return page.evaluate(
    async ({ signalling, query, waitMs }) => {
      const g = globalThis as any;
      const json = (body: unknown) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const mic = await g.navigator.mediaDevices.getUserMedia({ audio: true });
      const pc = new g.RTCPeerConnection();
      pc.addTransceiver(mic.getAudioTracks()[0], { direction: 'sendrecv' });
      const channel = pc.createDataChannel('events');
      const events: string[] = [];
      channel.onmessage = (m: any) => events.push(JSON.parse(m.data).type);
      const gathered: any[] = [];
      const gatheringDone = new Promise<void>((resolve) => {
        pc.onicecandidate = (e: any) => (e.candidate?.candidate ? gathered.push(e.candidate) : resolve());
      });
      const offer = await pc.createOffer();
      await pc.setLocalDescription(offer);
      // Non-trickle: wait for every candidate and send them inside the SDP. Trickle: the bare offer.
      if (signalling === 'non-trickle') await gatheringDone;
      const sdp: string = signalling === 'non-trickle' ? pc.localDescription.sdp : offer.sdp;
      const response = await fetch(`/offer?${query}`, { method: 'POST', ...json({ sdp, type: 'offer' }) });
      const answer: any = await response.json();
      if (!response.ok) throw new Error(`offer refused: ${JSON.stringify(answer)}`);
      await pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp.replace(/^a=candidate:.*\r?\n/gm, '') });
      const patchStatuses: number[] = [];
      let patchedCandidates = 0;
      if (signalling === 'trickle-camel' || signalling === 'trickle-snake') {
        await gatheringDone;
        // Sent as they would trickle: a few at a time, in the two body forms the server accepts.
        for (let at = 0; at < gathered.length; at += 4) {
          const batch = gathered.slice(at, at + 4);
          const patch =
            signalling === 'trickle-camel'
              ? fetch(`/offer/${encodeURIComponent(answer.pc_id)}`, { method: 'PATCH', ...json({ candidates: batch.map((c: any) => ({ candidate: c.candidate, sdpMid: c.sdpMid, sdpMLineIndex: c.sdpMLineIndex })) }) })
              : fetch('/offer', { method: 'PATCH', ...json({ pc_id: answer.pc_id, candidates: batch.map((c: any) => ({ candidate: c.candidate, sdp_mid: c.sdpMid, sdp_mline_index: c.sdpMLineIndex })) }) });
          patchStatuses.push((await patch).status);
          patchedCandidates += batch.length;
        }
      }
      const started = Date.now();
      // The session's first state card follows session_started once the first minute is paid. The
      // events come over the data channel, and the peer connection's own state can read
      // "connecting" a moment longer on a busy machine: both are waited for, up to waitMs.
      const done = () => events.includes('flow_state') && pc.connectionState === 'connected';
      while (!done() && Date.now() - started < waitMs) await new Promise((r) => setTimeout(r, 50));
      const outcome = {
        offerCandidates: (sdp.match(/^a=candidate:/gm) ?? []).length,
        patchStatuses,
        patchedCandidates,
        connectionState: pc.connectionState,
        events: [...events],
      };
      if (channel.readyState === 'open') channel.send(JSON.stringify({ type: 'end' }));
      await new Promise((r) => setTimeout(r, 100));
      pc.close();
      for (const track of mic.getTracks()) track.stop();
      return outcome;
    },
    { signalling, query, waitMs },
  );
}

describe('WebRTC signalling with and without trickle ICE', () => {
  let rig: VoiceRig;
  let chromium: TestBrowser;
  let page: Page;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let query: string;

  beforeAll(async () => {
    dir = await tempDir();
    [rig, chromium] = await Promise.all([
      startVoiceRig({ rules: GUESSING_GAME_RULES }),
      writeMicWav(dir.path, null).then((wav) => launchChromium({ micWav: wav })),
    ]);
    query = `mode=flow&program_id=${rig.flowId}&access_token=${rig.account.jwt}`;
    page = await chromium.newPage();
    await page.goto(`${rig.server.url}/test`);
  });
  afterAll(async () => {
    await chromium?.close();
    await rig?.close();
    await dir?.remove();
  });

  it('connects with a non-trickle offer that carries its candidates in the SDP', { timeout: 20_000 }, async () => {
    const outcome = await exchange(page, 'non-trickle', query, 10_000);
    expect(outcome.offerCandidates).toBeGreaterThan(0);
    expect(outcome).toMatchObject({ connectionState: 'connected', patchStatuses: [] });
    expect(outcome.events.slice(0, 2)).toEqual(['session_started', 'flow_state']);
  });

  it('connects with an empty-candidate offer and candidates trickled by PATCH /offer/{pc_id} (camelCase)', { timeout: 20_000 }, async () => {
    const outcome = await exchange(page, 'trickle-camel', query, 10_000);
    expect(outcome.offerCandidates).toBe(0);
    expect(outcome.patchedCandidates).toBeGreaterThan(0);
    expect(outcome.patchStatuses.every((status) => status === 200)).toBe(true);
    expect(outcome.connectionState).toBe('connected');
    expect(outcome.events.slice(0, 2)).toEqual(['session_started', 'flow_state']);
  });

  it("connects with candidates trickled by PATCH /offer in Pipecat's snake_case body", { timeout: 20_000 }, async () => {
    const outcome = await exchange(page, 'trickle-snake', query, 10_000);
    expect(outcome.offerCandidates).toBe(0);
    expect(outcome.patchedCandidates).toBeGreaterThan(0);
    expect(outcome.patchStatuses.every((status) => status === 200)).toBe(true);
    expect(outcome.connectionState).toBe('connected');
    expect(outcome.events.slice(0, 2)).toEqual(['session_started', 'flow_state']);
  });

  it('does not connect when the server never learns a candidate (so the cases above depend on them)', { timeout: 20_000 }, async () => {
    const outcome = await exchange(page, 'no-candidates', query, 3_000);
    expect(outcome.offerCandidates).toBe(0);
    expect(outcome.events).toEqual([]);
    expect(outcome.connectionState).not.toBe('connected');
  });

  it('answers a PATCH for an unknown pc_id with 404 in the API error shape', async () => {
    const candidates = [{ candidate: 'candidate:1 1 udp 2122194687 127.0.0.1 40000 typ host', sdpMid: '0', sdpMLineIndex: 0 }];
    expectError(await rig.server.request('PATCH', '/offer/pc_doesnotexist', { body: { candidates } }), 404, 'not_found');
    expectError(await rig.server.request('PATCH', '/offer', { body: { pc_id: 'pc_doesnotexist', candidates: [{ candidate: candidates[0]!.candidate, sdp_mid: '0', sdp_mline_index: 0 }] } }), 404, 'not_found');
  });
});
