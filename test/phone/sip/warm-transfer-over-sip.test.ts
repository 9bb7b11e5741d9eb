// A warm transfer on a SIP call: the caller (sipp, calling Voxflow directly) reaches a flow that
// hands them to the front desk with `mode: warm`. Voxflow places a second call through the trunk
// it registered to (a real kamailio on loopback, which challenges it) to the person (a sipp UAS).
// When the person answers, they hear the summary, then the two calls are bridged: what the person
// says reaches the caller, the session ends `transferred`, and when the person hangs up the caller
// hears BYE. When the person is not reached: warm-transfer-over-sip-nobody-answers.test.ts.
import { describe, expect, it, vi } from 'vitest';
import { listenForRtp, runSipp, type SipRig, udpListening } from '../../support/sip-rig.ts';
import { RIG_START_TIMEOUT_MS } from '../../support/voice-server.ts';
import { FRONT_DESK, loudest, startWarmDesk, warmDesk, type WarmDeskSetup } from './warm-desk.ts';

const TRUNK_PASSWORD = 'trunk-secret-7373';
const DESK_LINE = '+15550005000';


type TimelineEvent = { type: string; event: Record<string, unknown> };

let setup: Promise<WarmDeskSetup> | null = null;
const ready = () => (setup ??= startWarmDesk(TRUNK_PASSWORD, { [DESK_LINE]: warmDesk(20, 'warm-desk') }));

describe('a warm transfer over SIP', () => {
  const api = (rig: SipRig, path: string) => rig.server.request('GET', path, { apiKey: rig.account.apiKey }).then((r) => r.body);
  const sessionOf = async (rig: SipRig, before: Set<string>) =>
    vi.waitFor(
      async () => {
        const found = (await api(rig, '/v1/sessions')).find((s: { id: string; transport: string }) => s.transport === 'sip' && !before.has(s.id));
        expect(found).toBeDefined();
        return found.id as string;
      },
      { timeout: 30_000, interval: 100 },
    );

  it('calls the person through the trunk, tells them the summary, and bridges the caller to them', { timeout: RIG_START_TIMEOUT_MS + 150_000 }, async () => {
    const { trunk, rig, uasPort } = await ready();
    const before = new Set<string>((await api(rig, '/v1/sessions')).map((s: { id: string }) => s.id));
    const personEar = await listenForRtp();
    const callerEar = await listenForRtp();
    // The person answers after a second's ringing, listens 6 s, speaks 7 s, and hangs up 15 s after answering.
    const person = runSipp({ rig, scenario: 'callee-answers.xml', uasPort, rtpPort: personEar.port, timeoutSeconds: 120 });
    await udpListening(uasPort);
    const caller = runSipp({ rig, scenario: 'caller-waits-for-bye.xml', service: DESK_LINE, rtpPort: callerEar.port, timeoutSeconds: 150 });
    const id = await sessionOf(rig, before);
    let bridgedAt = 0;
    const transferred = await vi.waitFor(
      async () => {
        const body = await api(rig, `/v1/sessions/${id}`);
        expect(body.status).toBe('ended');
        bridgedAt = performance.now();
        return body;
      },
      { timeout: 90_000, interval: 100 },
    );
    expect(transferred).toMatchObject({ transport: 'sip', end_reason: 'transferred', transferred_to: FRONT_DESK });
    const [personRun, callerRun] = await Promise.all([person, caller]);
    expect(personRun.code, personRun.output).toBe(0);
    // The person hung up, and the caller, still on the line, was hung up by Voxflow.
    expect(callerRun.code, callerRun.output).toBe(0);
    // The trunk took the person's call (challenged, with the registration's credentials), from the business's number.
    expect(trunk.lines.some((l) => l.includes(`OUTBOUND ${FRONT_DESK}`))).toBe(true);
    // The person heard the summary before being joined (their PCMA), and the caller heard the person after it.
    const summary = personEar.packets.filter((p) => p.payloadType === 8 && p.at < bridgedAt);
    expect(summary.length).toBeGreaterThan(25);
    expect(loudest(summary, 'alaw')).toBeGreaterThan(-40);
    const relayed = callerEar.packets.filter((p) => p.payloadType === 0 && p.at > bridgedAt + 300);
    expect(relayed.length).toBeGreaterThan(100);
    expect(loudest(relayed, 'mulaw')).toBeGreaterThan(-40);
    const timeline: TimelineEvent[] = (await api(rig, `/v1/sessions/${id}/events?limit=500`)).events;
    expect(timeline.filter((e) => e.type === 'transfer').map((e) => [e.event.status, e.event.mode])).toEqual([
      ['started', 'warm'],
      ['completed', 'warm'],
    ]);
  });
});
