// Voxflow registering to a SIP trunk (VOXFLOW_SIP_REGISTER), against a real kamailio on loopback as
// the trunk's registrar and proxy: the REGISTER is challenged and taken with the password from the
// settings, renewed at about half of what the registrar granted, and removed (Expires: 0) when the
// server stops; a caller dialling the trunk's number reaches the flow bound to that number, though
// the account lists no source the trunk's calls come from. (A registrar that refuses registrations:
// voxflow-registers-to-a-trunk-that-refuses.test.ts, whose waits run beside these.)
import { describe, expect, it, vi } from 'vitest';
import { afterThisTest } from '../../support/after-this-test.ts';
import { startKamailio } from '../../support/kamailio.ts';
import { listenForRtp, runSipp, startSipRig, type SipRig, goodbyeFlow } from '../../support/sip-rig.ts';
import { RIG_START_TIMEOUT_MS } from '../../support/voice-server.ts';

const TRUNK_USER = 'voxtrunk';
const TRUNK_PASSWORD = 'trunk-secret-4242';
const DID = '+15550001000';

const GOODBYE_YAML = goodbyeFlow('trunk-goodbye');

async function registeringRig(registrarPort: number, password = TRUNK_PASSWORD, params = ''): Promise<SipRig & { stop(): Promise<void> }> {
  // The account lists no source on loopback: the trunk's calls are taken because we registered there.
  const rig = await startSipRig({
    allowedSources: '10.9.9.9',
    config: { sip: { register: `${TRUNK_USER}@127.0.0.1:${registrarPort};expires=60${params}`, registerPassword: password } },
  });
  let closed: Promise<void> | null = null;
  const stop = () => (closed ??= rig.close());
  afterThisTest(stop);
  return { ...rig, stop };
}

type SessionRow = { id: string; transport: string; status: string };

describe('Voxflow registering to a SIP trunk', () => {
  it('registers with digest, takes the trunk\'s call on the number\'s flow, renews, and unregisters when it stops', { timeout: RIG_START_TIMEOUT_MS + 90_000 }, async () => {
    const trunk = await startKamailio({ trunkUser: TRUNK_USER, trunkPassword: TRUNK_PASSWORD, did: DID });
    const rig = await registeringRig(trunk.port);
    await trunk.waitForLine(/REGISTER voxtrunk expires=60/);
    await rig.bind(DID, GOODBYE_YAML);

    const ear = await listenForRtp();
    const run = await runSipp({ rig, scenario: 'call-through-trunk.xml', service: DID, rtpPort: ear.port, remotePort: trunk.port });
    expect(run.code, run.output).toBe(0);
    // The trunk sent the call to our registration's Contact; the number dialled picked the flow.
    expect(trunk.lines.some((l) => /INVITE DID to sip:voxtrunk@127\.0\.0\.1:\d+/.test(l))).toBe(true);
    const sessions: SessionRow[] = (await rig.server.request('GET', '/v1/sessions', { apiKey: rig.account.apiKey })).body;
    const call = sessions.find((s) => s.transport === 'sip');
    expect(call).toBeDefined();
    const done = await vi.waitFor(
      async () => {
        const body = (await rig.server.request('GET', `/v1/sessions/${call!.id}`, { apiKey: rig.account.apiKey })).body;
        expect(body.status).toBe('ended');
        return body;
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(done).toMatchObject({ transport: 'sip', direction: 'inbound', from: '+15550100001', to: DID, end_reason: 'flow_ended' });
    expect(ear.packets.filter((p) => p.payloadType === 0).length).toBeGreaterThan(20);

    // The registrar grants 8 s (its maximum) of the 60 asked: the registration is renewed at about
    // half of what was granted (not of what was asked, and not at once).
    await vi.waitFor(() => expect(trunk.registers().filter((r) => r.expires > 0).length).toBeGreaterThanOrEqual(2), { timeout: 30_000, interval: 200 });
    const [first, second] = trunk.registers();
    const gapSeconds = (second!.at - first!.at) / 1000;
    expect(gapSeconds).toBeGreaterThan(2.5);
    expect(gapSeconds).toBeLessThan(7.5);

    // Stopping the server removes the binding at the registrar.
    await rig.stop();
    await trunk.waitForLine(/REGISTER voxtrunk expires=0/, 10_000);
    // The password never reached the registrar's log (only its digest did).
    expect(trunk.lines.join('\n')).not.toContain(TRUNK_PASSWORD);
  });

  it('registers over TCP with ;transport=tcp, takes the trunk\'s call over TCP, renews, and unregisters', { timeout: RIG_START_TIMEOUT_MS + 90_000 }, async () => {
    const trunk = await startKamailio({ trunkUser: TRUNK_USER, trunkPassword: TRUNK_PASSWORD, did: DID, tcp: true });
    const rig = await registeringRig(trunk.port, TRUNK_PASSWORD, ';transport=tcp');
    // Registered over TCP, with our TCP listener as the Contact.
    const registered = await trunk.waitForLine(/REGISTER voxtrunk expires=60/);
    expect(registered, registered).toMatch(new RegExp(`contact=<?sip:voxtrunk@127\\.0\\.0\\.1:${rig.tcpPort};transport=tcp>? proto=tcp`));
    await rig.bind(DID, GOODBYE_YAML);
    // The caller reaches the trunk over UDP; the trunk sends the call on to us over TCP.
    const ear = await listenForRtp();
    const run = await runSipp({ rig, scenario: 'call-through-trunk.xml', service: DID, rtpPort: ear.port, remotePort: trunk.port });
    expect(run.code, run.output).toBe(0);
    expect(trunk.lines.some((l) => new RegExp(`INVITE DID to sip:voxtrunk@127\\.0\\.0\\.1:${rig.tcpPort};transport=tcp`).test(l))).toBe(true);
    const sessions: SessionRow[] = (await rig.server.request('GET', '/v1/sessions', { apiKey: rig.account.apiKey })).body;
    const call = sessions.find((s) => s.transport === 'sip');
    expect(call).toBeDefined();
    await vi.waitFor(
      async () => expect((await rig.server.request('GET', `/v1/sessions/${call!.id}`, { apiKey: rig.account.apiKey })).body).toMatchObject({ status: 'ended', to: DID, end_reason: 'flow_ended' }),
      { timeout: 20_000, interval: 100 },
    );
    expect(ear.packets.filter((p) => p.payloadType === 0).length).toBeGreaterThan(20);
    // Renewed over TCP at about half of the 8 s granted.
    await vi.waitFor(() => expect(trunk.registers().filter((r) => r.expires > 0).length).toBeGreaterThanOrEqual(2), { timeout: 30_000, interval: 200 });
    expect(trunk.lines.filter((l) => /REGISTER voxtrunk expires=60 .* proto=tcp/.test(l)).length).toBeGreaterThanOrEqual(2);
    await rig.stop();
    expect(await trunk.waitForLine(/REGISTER voxtrunk expires=0/, 10_000)).toMatch(/proto=tcp/);
  });

  it('does not register with a wrong password, and the trunk\'s call does not reach the flow', { timeout: RIG_START_TIMEOUT_MS + 60_000 }, async () => {
    const trunk = await startKamailio({ trunkUser: TRUNK_USER, trunkPassword: TRUNK_PASSWORD, did: DID });
    const rig = await registeringRig(trunk.port, 'not-the-password');
    await rig.bind(DID, GOODBYE_YAML);
    const ear = await listenForRtp();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const run = await runSipp({ rig, scenario: 'call-through-trunk.xml', service: DID, rtpPort: ear.port, remotePort: trunk.port, timeoutSeconds: 5 });
    expect(run.code).not.toBe(0);
    expect(run.output).toMatch(/480/);
    expect(trunk.registers()).toEqual([]);
    expect((await rig.server.request('GET', '/v1/sessions', { apiKey: rig.account.apiKey })).body).toEqual([]);
  });
});
