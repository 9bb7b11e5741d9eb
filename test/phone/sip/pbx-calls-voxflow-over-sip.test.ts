// A PBX's call, as real sipp places it, straight to Voxflow's SIP endpoint on loopback: the agent
// answers on the number's flow and is heard as RTP (one packet every 20 ms, in sequence, silence
// between its words so the stream never stops), the caller's speech ("I'm ready", as A-law RTP
// sipp plays) moves the flow, and the call ends when either side hangs up, billed once, as a phone
// session with transport `sip`. Hold stops Voxflow's audio and resume brings it back in sequence; a CANCEL
// before the answer leaves nothing; unknown sources, unknown numbers and offers without G.711 are
// refused with no session; a trunk outside the listed sources is taken once it answers the
// digest challenge.
import { describe, expect, it, vi } from 'vitest';
import { dbfs } from '../../../server/audio/pcm.ts';
import { decodeG711 } from '../../../server/audio/g711.ts';
import { GUESSING_GAME_RULES } from '../../support/voice-server.ts';
import { GUESSING_GAME_YAML } from '../../support/server.ts';
import { listenForRtp, otherAccountBinding, runSipp, saying, useSipRig, type RtpPacketSeen, goodbyeFlow } from '../../support/sip-rig.ts';

const GOODBYE_YAML = goodbyeFlow('goodbye');

type SessionRow = { id: string; transport: string; status: string; end_reason: string | null };

describe('a PBX calling Voxflow over SIP', () => {
  const rig = useSipRig({ rules: GUESSING_GAME_RULES, transcripts: ["I'm ready"], digestUser: 'trunk' });
  const sessions = async (): Promise<SessionRow[]> => (await rig().server.request('GET', '/v1/sessions', { apiKey: rig().account.apiKey })).body;
  const detail = async (id: string) => (await rig().server.request('GET', `/v1/sessions/${id}`, { apiKey: rig().account.apiKey })).body;
  const balance = async () => (await rig().server.request('GET', '/v1/credits/balance', { apiKey: rig().account.apiKey })).body.balance_usd_cents as number;
  const newSession = async (known: Set<string>) =>
    vi.waitFor(
      async () => {
        const found = (await sessions()).find((s) => s.transport === 'sip' && !known.has(s.id));
        expect(found).toBeDefined();
        return found!;
      },
      { timeout: 20_000, interval: 100 },
    );
  const ended = (id: string) =>
    vi.waitFor(
      async () => {
        const body = await detail(id);
        expect(body.status).toBe('ended');
        return body;
      },
      { timeout: 20_000, interval: 100 },
    );
  let flowsBound: Promise<void> | null = null;
  const bound = () =>
    (flowsBound ??= (async () => {
      await rig().bind('1000', GUESSING_GAME_YAML);
      await rig().bind('2000', GOODBYE_YAML);
      await otherAccountBinding(rig(), '3000', GOODBYE_YAML, '10.0.0.0/8');
    })());

  /**
   * The level of the loudest 200 ms of a stream: speech is there whatever share of the call it
   * took (on a loaded machine the caller may hang up soon after the agent starts, and the whole
   * stream's level then reads as the silence around it).
   */
  const loudest = (pcm: Int16Array) => {
    let best = -Infinity;
    for (let at = 0; at + 1_600 <= pcm.length; at += 1_600) best = Math.max(best, dbfs(pcm.subarray(at, at + 1_600)));
    return best;
  };

  it('answers on the flow, is heard in paced RTP, hears the caller, and ends billed once when the caller hangs up', { timeout: 90_000 }, async () => {
    await bound();
    const before = new Set((await sessions()).map((s) => s.id));
    const credit = await balance();
    const ear = await listenForRtp();
    // The caller hears the greeting out for 4.5 s, says "I'm ready", and hangs up 4 s after.
    const call = runSipp({ rig: rig(), scenario: await saying('basic-call.xml', "I'm ready", 4_500, 4_000), service: '1000', rtpPort: ear.port });
    const session = await newSession(before);
    // The caller's words reach recognition and move the game on.
    await vi.waitFor(async () => expect((await detail(session.id)).path.map((p: { state: string }) => p.state)).toContain('playing'), { timeout: 30_000, interval: 200 });
    const run = await call;
    expect(run.code, run.output).toBe(0);
    const done = await ended(session.id);
    expect(done).toMatchObject({ transport: 'sip', direction: 'inbound', from: '+15550100001', to: '1000', end_reason: 'caller_hung_up' });
    expect(done.carrier_call_id).toEqual(expect.any(String));
    expect(done.transcript.filter((t: { role: string }) => t.role === 'user').map((t: { text: string }) => t.text)).toEqual(["I'm ready"]);

    // The caller offered PCMA first: Voxflow answered in A-law (8), every 20 ms, with no gap in
    // sequence or time, and what it said was speech, with silence between.
    const audio = ear.packets.filter((p) => p.payloadType === 8);
    expect(audio.length).toBe(ear.packets.length);
    expect(audio.length).toBeGreaterThan(200);
    expectContinuous(audio);
    const pcm = decodeG711('alaw', Buffer.concat(audio.map((p) => p.payload)));
    expect(loudest(pcm)).toBeGreaterThan(-40);
    expect(audio.filter((p) => p.payload.every((b) => b === 0xd5)).length).toBeGreaterThan(10);

    // Billed once: the first minute, at the account's rate.
    expect(done.credits_charged_usd_cents).toBeGreaterThan(0);
    expect(await balance()).toBe(credit - done.credits_charged_usd_cents);
    const numbers = (await rig().server.request('GET', '/v1/phone-numbers', { apiKey: rig().account.apiKey })).body;
    expect(numbers.find((n: { number: string }) => n.number === '1000')).toMatchObject({ carrier: 'sip', last_call_status: 'answered', webhook_url: null });
  });

  it.each(['udp', 'tcp'] as const)('hangs up (BYE) once the flow has said goodbye, over %s', { timeout: 60_000 }, async (transport) => {
    await bound();
    const before = new Set((await sessions()).map((s) => s.id));
    const ear = await listenForRtp();
    const run = await runSipp({ rig: rig(), scenario: 'hung-up-by-voxflow.xml', service: '2000', rtpPort: ear.port, transport });
    expect(run.code, run.output).toBe(0);
    const session = await newSession(before);
    expect(await ended(session.id)).toMatchObject({ transport: 'sip', end_reason: 'flow_ended' });
    // The goodbye was heard before the BYE: PCMU, the caller's first choice here.
    const audio = ear.packets.filter((p) => p.payloadType === 0);
    expect(loudest(decodeG711('mulaw', Buffer.concat(audio.map((p) => p.payload))))).toBeGreaterThan(-40);
    expectContinuous(audio);
  });

  it('stops its audio while the caller holds, and resumes in sequence', { timeout: 60_000 }, async () => {
    await bound();
    const before = new Set((await sessions()).map((s) => s.id));
    const ear = await listenForRtp();
    const run = await runSipp({ rig: rig(), scenario: 'hold-and-resume.xml', service: '1000', rtpPort: ear.port });
    expect(run.code, run.output).toBe(0);
    const session = await newSession(before);
    expect(await ended(session.id)).toMatchObject({ end_reason: 'caller_hung_up' });
    const packets = ear.packets;
    // One break in the stream, where the caller held: its timestamps jump over the time held,
    // and nothing came in that time (sipp held for 2.5 s).
    const breaks = packets.slice(1).flatMap((p, i) => (((p.timestamp - packets[i]!.timestamp) >>> 0) !== 160 ? [i + 1] : []));
    expect(breaks).toHaveLength(1);
    const at = breaks[0]!;
    const [held, resumed] = [packets.slice(0, at), packets.slice(at)];
    const silentMs = resumed[0]!.at - held.at(-1)!.at;
    expect(silentMs).toBeGreaterThan(1800);
    expect(held.length).toBeGreaterThan(50);
    expect(resumed.length).toBeGreaterThan(50);
    expectContinuous(held);
    expectContinuous(resumed);
    // Resumed: the next sequence number, a new talkspurt, its timestamp moved on by the time held.
    expect(resumed[0]!.sequence).toBe((held.at(-1)!.sequence + 1) & 0xffff);
    expect(resumed[0]!.marker).toBe(true);
    const advanced = (resumed[0]!.timestamp - held.at(-1)!.timestamp) >>> 0;
    expect(advanced / 8).toBeGreaterThan(silentMs * 0.7);
  });

  it('leaves no session and charges nothing when the caller cancels before the answer', { timeout: 60_000 }, async () => {
    await bound();
    const credit = await balance();
    const live = () => sessions().then((all) => all.filter((s) => s.status !== 'ended').length);
    const ear = await listenForRtp();
    const run = await runSipp({ rig: rig(), scenario: 'cancel-before-answer.xml', service: '1000', rtpPort: ear.port });
    expect(run.code, run.output).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await live()).toBe(0);
    expect(await balance()).toBe(credit);
    expect(ear.packets).toEqual([]);
  });

  it.each([
    { what: 'a source the account does not list', scenario: 'refused-403-unknown-source.xml', service: '3000' },
    { what: 'a number no account bound', scenario: 'refused-404-unknown-number.xml', service: '9999' },
    { what: 'an offer of G.729 only', scenario: 'refused-488-g729-only.xml', service: '1000' },
  ])('refuses $what, with no session', { timeout: 60_000 }, async ({ scenario, service }) => {
    await bound();
    const before = (await sessions()).length;
    const ear = await listenForRtp();
    const run = await runSipp({ rig: rig(), scenario, service, rtpPort: ear.port });
    expect(run.code, run.output).toBe(0);
    expect((await sessions()).length).toBe(before);
    expect(ear.packets).toEqual([]);
  });

  it('challenges a caller outside the listed sources and takes the call with the account\'s digest credentials', { timeout: 60_000 }, async () => {
    await bound();
    const before = new Set((await sessions()).map((s) => s.id));
    const ear = await listenForRtp('127.0.0.2');
    const wrong = await runSipp({ rig: rig(), scenario: 'digest-auth-call.xml', service: '2000', rtpPort: ear.port, localIp: '127.0.0.2', extraArgs: ['-au', 'trunk', '-ap', 'not-the-password'], timeoutSeconds: 3 });
    expect(wrong.code).not.toBe(0);
    expect((await sessions()).filter((s) => !before.has(s.id))).toEqual([]);
    const run = await runSipp({ rig: rig(), scenario: 'digest-auth-call.xml', service: '2000', rtpPort: ear.port, localIp: '127.0.0.2', extraArgs: ['-au', 'trunk', '-ap', 'trunk-password-0001'] });
    expect(run.code, run.output).toBe(0);
    const session = await newSession(before);
    expect(await ended(session.id)).toMatchObject({ end_reason: 'flow_ended' });
  });
});

/** One packet per 20 ms of audio: sequence numbers +1 and timestamps +160 (8 kHz) every packet. */
function expectContinuous(packets: RtpPacketSeen[]): void {
  expect(packets.length).toBeGreaterThan(0);
  expect(new Set(packets.map((p) => p.ssrc)).size).toBe(1);
  for (let i = 1; i < packets.length; i++) {
    expect((packets[i]!.sequence - packets[i - 1]!.sequence) & 0xffff).toBe(1);
    expect((packets[i]!.timestamp - packets[i - 1]!.timestamp) >>> 0).toBe(160);
  }
}
