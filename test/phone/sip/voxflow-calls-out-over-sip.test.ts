// Calls Voxflow places over SIP: POST /v1/calls from a `sip` number sends an INVITE through the
// trunk it registered to (a real kamailio on loopback, which challenges it with 407), on to the
// person called (a sipp UAS). Answered, the flow runs and is heard, the callee's speech is
// recognised, and when the callee hangs up the call is billed and ends
// `completed`; busy, no answer and a failure end the session with the call status the carriers
// use, charged nothing.
import { describe, expect, it, vi } from 'vitest';
import { dbfs } from '../../../server/audio/pcm.ts';
import { decodeG711 } from '../../../server/audio/g711.ts';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterThisFile, afterThisTest } from '../../support/after-this-test.ts';
import { freeUdpPort, startKamailio, type Kamailio } from '../../support/kamailio.ts';
import { FIXTURES, listenForRtp, runSipp, saying, startSipRig, type SipRig, udpListening } from '../../support/sip-rig.ts';
import { RIG_START_TIMEOUT_MS } from '../../support/voice-server.ts';

const TRUNK_USER = 'voxtrunk';
const TRUNK_PASSWORD = 'trunk-secret-5151';
const OUR_NUMBER = '+15550003000';
const CALLEE = '+15550004000';

const REMINDER_YAML = `
id: outbound-reminder
version: "1.0.0"
initial_state: remind
settings:
  base_system_prompt: You call patients for a dental clinic.
states:
  remind:
    ui: { artifact_type: card, prompt: "Reminder" }
    on_enter:
      say: Hello, the dental clinic calling about your appointment.
    agent:
      prompt: Confirm the appointment.
`;

interface Setup {
  trunk: Kamailio;
  rig: SipRig;
  uasPort: number;
  flowId: string;
}

let setup: Promise<Setup> | null = null;
function ready(): Promise<Setup> {
  return (setup ??= (async () => {
    const uasPort = await freeUdpPort();
    const trunk = await startKamailio({ trunkUser: TRUNK_USER, trunkPassword: TRUNK_PASSWORD, did: '+15550001000', outPort: uasPort, forFile: true });
    const rig = await startSipRig({ allowedSources: '10.9.9.9', config: { sip: { register: `${TRUNK_USER}@127.0.0.1:${trunk.port}`, registerPassword: TRUNK_PASSWORD } } });
    afterThisFile(() => rig.close());
    await trunk.waitForLine(/REGISTER voxtrunk expires=300/);
    const flowId = await rig.bind(OUR_NUMBER, REMINDER_YAML);
    return { trunk, rig, uasPort, flowId };
  })());
}

describe('Voxflow placing calls over SIP', () => {
  const detail = async (rig: SipRig, id: string) => (await rig.server.request('GET', `/v1/sessions/${id}`, { apiKey: rig.account.apiKey })).body;
  const balance = async (rig: SipRig) => (await rig.server.request('GET', '/v1/credits/balance', { apiKey: rig.account.apiKey })).body.balance_usd_cents as number;
  const place = (rig: SipRig, flowId: string, to = CALLEE) => rig.server.request('POST', '/v1/calls', { apiKey: rig.account.apiKey, body: { flow_id: flowId, from: OUR_NUMBER, to } });

  it('calls through the trunk, runs the flow once answered, is heard, and ends completed and billed', { timeout: RIG_START_TIMEOUT_MS + 90_000 }, async () => {
    const { trunk, rig, uasPort, flowId } = await ready();
    const credit = await balance(rig);
    const ear = await listenForRtp();
    // The callee hears the agent's line for 3.5 s, answers it, and hangs up 2 s after.
    const callee = runSipp({ rig, scenario: await saying('callee-answers.xml', "Yes, I'll be there.", 3_500, 2_000), uasPort, rtpPort: ear.port });
    await udpListening(uasPort);
    const placed = await place(rig, flowId);
    expect(placed.status, placed.text).toBe(201);
    expect(placed.body).toMatchObject({ carrier: 'sip', from: OUR_NUMBER, to: CALLEE, carrier_call_id: expect.any(String) });
    const run = await callee;
    expect(run.code, run.output).toBe(0);
    // The trunk challenged the INVITE and took it with the registration's credentials.
    expect(trunk.lines.some((l) => l.includes(`OUTBOUND ${CALLEE}`))).toBe(true);
    const done = await vi.waitFor(
      async () => {
        const body = await detail(rig, placed.body.session_id);
        expect(body).toMatchObject({ status: 'ended', call_status: 'completed' });
        return body;
      },
      { timeout: 20_000, interval: 100 },
    );
    // The callee hung up once it had heard the agent.
    expect(done).toMatchObject({ transport: 'sip', direction: 'outbound', from: OUR_NUMBER, to: CALLEE, end_reason: 'caller_hung_up' });
    // What the callee heard: the agent's words, in the PCMA it answered with.
    const audio = ear.packets.filter((p) => p.payloadType === 8);
    expect(audio.length).toBeGreaterThan(50);
    const pcm = decodeG711('alaw', Buffer.concat(audio.map((p) => p.payload)));
    let loudest = -Infinity;
    for (let at = 0; at + 1_600 <= pcm.length; at += 1_600) loudest = Math.max(loudest, dbfs(pcm.subarray(at, at + 1_600)));
    expect(loudest).toBeGreaterThan(-40);
    // The callee spoke: speech recognition was used, and its minute charged once.
    expect(done.credits_charged_usd_cents).toBeGreaterThan(0);
    expect(await balance(rig)).toBe(credit - done.credits_charged_usd_cents);
  });

  it.each([
    { answer: '486', status: 'busy' },
    { answer: '480', status: 'no_answer' },
    { answer: '503', status: 'failed' },
  ])('ends the session $status, charging nothing, when the callee answers $answer', { timeout: RIG_START_TIMEOUT_MS + 60_000 }, async ({ answer, status }) => {
    const { rig, uasPort, flowId } = await ready();
    const credit = await balance(rig);
    const ear = await listenForRtp();
    const dir = await mkdtemp(join(tmpdir(), 'voxflow-callee-'));
    afterThisTest(() => rm(dir, { recursive: true, force: true }));
    const scenario = join(dir, `callee-${answer}.xml`);
    await writeFile(scenario, (await readFile(join(FIXTURES, 'callee-refuses.xml'), 'utf8')).replace('SIP/2.0 STATUS', `SIP/2.0 ${answer}`));
    const callee = runSipp({ rig, scenario, uasPort, rtpPort: ear.port });
    await udpListening(uasPort);
    const placed = await place(rig, flowId);
    expect(placed.status, placed.text).toBe(201);
    const run = await callee;
    expect(run.code, run.output).toBe(0);
    await vi.waitFor(async () => expect(await detail(rig, placed.body.session_id)).toMatchObject({ status: 'ended', call_status: status, end_reason: status, credits_charged_usd_cents: 0 }), {
      timeout: 20_000,
      interval: 100,
    });
    expect(await balance(rig)).toBe(credit);
    expect(ear.packets).toEqual([]);
  });
});
