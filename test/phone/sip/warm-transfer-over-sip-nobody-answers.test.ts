// A warm transfer over SIP that does not reach the person. The caller (sipp, calling Voxflow
// directly) reaches a flow that hands them to the front desk with `mode: warm`; Voxflow calls the
// person through the trunk it registered to (a real kamailio on loopback), where a sipp UAS plays
// the person. Nobody picks up within the transfer's timeout: the ringing is cancelled and the
// caller, still on the line, hears the flow's on_failed state. The person refuses (486 busy, 603
// decline): on_failed at once, without waiting for the timeout. The caller hangs up while the
// phone rings: the person's call is cancelled, and the session ends once, charged once.
import { describe, expect, it, vi } from 'vitest';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterThisTest } from '../../support/after-this-test.ts';
import { FIXTURES, listenForRtp, runSipp, type SipRig, udpListening } from '../../support/sip-rig.ts';
import { RIG_START_TIMEOUT_MS } from '../../support/voice-server.ts';
import { FRONT_DESK, loudest, startWarmDesk, warmDesk, type WarmDeskSetup } from './warm-desk.ts';

const TRUNK_PASSWORD = 'trunk-secret-7374';
/** The business's lines, one flow each: the same transfer with a short and a long ring. */
const SHORT_RING_LINE = '+15550005001';
const LONG_RING_LINE = '+15550005002';


type TimelineEvent = { type: string; at?: string; created_at?: string; event: Record<string, unknown> };

let setup: Promise<WarmDeskSetup> | null = null;
const ready = () => (setup ??= startWarmDesk(TRUNK_PASSWORD, { [SHORT_RING_LINE]: warmDesk(5), [LONG_RING_LINE]: warmDesk(60) }));

const api = (rig: SipRig, path: string) => rig.server.request('GET', path, { apiKey: rig.account.apiKey }).then((r) => r.body);
const balance = async (rig: SipRig) => (await api(rig, '/v1/credits/balance')).balance_usd_cents as number;
const sessionIds = async (rig: SipRig) => new Set<string>((await api(rig, '/v1/sessions')).map((s: { id: string }) => s.id));
const newSession = (rig: SipRig, before: Set<string>) =>
  vi.waitFor(
    async () => {
      const found = (await api(rig, '/v1/sessions')).find((s: { id: string; transport: string }) => s.transport === 'sip' && !before.has(s.id));
      expect(found).toBeDefined();
      return found.id as string;
    },
    { timeout: 30_000, interval: 100 },
  );
const ended = (rig: SipRig, id: string) =>
  vi.waitFor(
    async () => {
      const body = await api(rig, `/v1/sessions/${id}`);
      expect(body.status).toBe('ended');
      return body;
    },
    { timeout: 30_000, interval: 100 },
  );
const timelineOf = async (rig: SipRig, id: string): Promise<TimelineEvent[]> => (await api(rig, `/v1/sessions/${id}/events?limit=500`)).events;

/** A copy of callee-refuses.xml that answers `status`. */
async function refusing(status: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'voxflow-person-'));
  afterThisTest(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, `person-${status}.xml`);
  await writeFile(file, (await readFile(join(FIXTURES, 'callee-refuses.xml'), 'utf8')).replace('SIP/2.0 STATUS', `SIP/2.0 ${status}`));
  return file;
}

describe('a warm transfer over SIP that does not reach the person', () => {
  it('cancels the ringing after the transfer\'s timeout and the caller hears the flow\'s on_failed state', { timeout: RIG_START_TIMEOUT_MS + 120_000 }, async () => {
    const { rig, uasPort } = await ready();
    const before = await sessionIds(rig);
    const callerEar = await listenForRtp();
    const personEar = await listenForRtp();
    const person = runSipp({ rig, scenario: 'callee-rings-until-cancelled.xml', uasPort, rtpPort: personEar.port, timeoutSeconds: 120 });
    await udpListening(uasPort);
    const caller = runSipp({ rig, scenario: 'caller-waits-for-bye.xml', service: SHORT_RING_LINE, rtpPort: callerEar.port, timeoutSeconds: 150 });
    const id = await newSession(rig, before);
    // The person's sipp exits 0 only once it was sent the CANCEL (and answered 487).
    const personRun = await person;
    const cancelledAt = performance.now();
    expect(personRun.code, personRun.output).toBe(0);
    // Back in the flow once the ringing is cancelled (the person's 487 came), not 32 s later when
    // the call to the person would have timed out.
    await vi.waitFor(async () => expect((await api(rig, `/v1/sessions/${id}`)).path.at(-1)?.state).toBe('sorry'), { timeout: 15_000, interval: 100 });
    const callerRun = await caller;
    // The caller was never hung up on by the transfer: the on_failed state said goodbye and ended the call.
    expect(callerRun.code, callerRun.output).toBe(0);
    const detail = await ended(rig, id);
    expect(detail).toMatchObject({ end_reason: expect.not.stringMatching(/caller_hung_up|transferred/), transferred_to: null });
    expect(detail.path.map((p: { state: string }) => p.state)).toEqual(['human', 'sorry']);
    const transfer = (await timelineOf(rig, id)).filter((e) => e.type === 'transfer');
    expect(transfer.map((e) => e.event.status)).toEqual(['started', 'failed']);
    expect(transfer[1]!.event.reason).toBe(`${FRONT_DESK} did not answer within 5 s`);
    // After the ringing stopped, the caller heard the agent again (the on_failed state's line).
    expect(loudest(callerEar.packets.filter((p) => p.payloadType === 0 && p.at > cancelledAt), 'mulaw')).toBeGreaterThan(-40);
    expect(personEar.packets).toEqual([]);
  });

  it.each([486, 603])('takes the caller back to the flow at once when the person answers %i', { timeout: RIG_START_TIMEOUT_MS + 120_000 }, async (status) => {
    const { rig, uasPort } = await ready();
    const before = await sessionIds(rig);
    const personEar = await listenForRtp();
    const callerEar = await listenForRtp();
    const person = runSipp({ rig, scenario: await refusing(status), uasPort, rtpPort: personEar.port, timeoutSeconds: 120 });
    await udpListening(uasPort);
    // Sixty seconds of ringing allowed: a refusal must not wait for them.
    const caller = runSipp({ rig, scenario: 'caller-waits-for-bye.xml', service: LONG_RING_LINE, rtpPort: callerEar.port, timeoutSeconds: 150 });
    const id = await newSession(rig, before);
    const personRun = await person;
    const refusedAt = performance.now();
    expect(personRun.code, personRun.output).toBe(0);
    await vi.waitFor(async () => expect((await api(rig, `/v1/sessions/${id}`)).path.at(-1)?.state).toBe('sorry'), { timeout: 15_000, interval: 100 });
    const backInTheFlowAfterMs = performance.now() - refusedAt;
    expect(backInTheFlowAfterMs).toBeLessThan(15_000);
    const callerRun = await caller;
    expect(callerRun.code, callerRun.output).toBe(0);
    const detail = await ended(rig, id);
    expect(detail.transferred_to).toBeNull();
    expect(detail.path.map((p: { state: string }) => p.state)).toEqual(['human', 'sorry']);
    const transfer = (await timelineOf(rig, id)).filter((e) => e.type === 'transfer');
    expect(transfer.map((e) => e.event.status)).toEqual(['started', 'failed']);
    expect(transfer[1]!.event.reason).toBe(`${FRONT_DESK} was busy`);
    expect(personEar.packets).toEqual([]);
    expect(loudest(callerEar.packets.filter((p) => p.payloadType === 0 && p.at > refusedAt), 'mulaw')).toBeGreaterThan(-40);
  });

  it('cancels the person\'s call when the caller hangs up while it rings, and ends the session once', { timeout: RIG_START_TIMEOUT_MS + 120_000 }, async () => {
    const { trunk, rig, uasPort } = await ready();
    const before = await sessionIds(rig);
    const credit = await balance(rig);
    const outboundBefore = trunk.lines.filter((l) => l.includes(`OUTBOUND ${FRONT_DESK}`)).length;
    const personEar = await listenForRtp();
    const callerEar = await listenForRtp();
    const person = runSipp({ rig, scenario: 'callee-rings-until-cancelled.xml', uasPort, rtpPort: personEar.port, timeoutSeconds: 120 });
    await udpListening(uasPort);
    // The caller hangs up 7 s after the answer; the person's phone may ring for 60 s.
    const caller = runSipp({ rig, scenario: 'caller-hangs-up-on-hold.xml', service: LONG_RING_LINE, rtpPort: callerEar.port, timeoutSeconds: 150 });
    const [personRun, callerRun] = await Promise.all([person, caller]);
    expect(callerRun.code, callerRun.output).toBe(0);
    const id = await newSession(rig, before);
    // The person's phone rang (the trunk took the call) and was then cancelled: sipp saw the CANCEL.
    expect(trunk.lines.filter((l) => l.includes(`OUTBOUND ${FRONT_DESK}`)).length).toBe(outboundBefore + 1);
    expect(personRun.code, personRun.output).toBe(0);
    const detail = await ended(rig, id);
    expect(detail).toMatchObject({ end_reason: 'caller_hung_up', transferred_to: null });
    expect(detail.path.map((p: { state: string }) => p.state)).toEqual(['human']);
    // Settled a moment later, the session is still ended once, charged once.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const timeline = await timelineOf(rig, id);
    // The transfer began, and never completed (the session was over before it could say failed).
    expect(timeline.filter((e) => e.type === 'transfer').map((e) => e.event.status)).toEqual(['started']);
    expect(timeline.filter((e) => e.type === 'session_ended').length, JSON.stringify(timeline.map((e) => e.type))).toBe(1);
    const after = await api(rig, `/v1/sessions/${id}`);
    expect(after).toMatchObject({ status: 'ended', end_reason: 'caller_hung_up' });
    expect(after.credits_charged_usd_cents).toBeGreaterThan(0);
    expect(await balance(rig)).toBe(credit - after.credits_charged_usd_cents);
    expect(personEar.packets).toEqual([]);
  });
});
