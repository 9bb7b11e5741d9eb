// What the SIP warm-transfer tests share: the flow that hands a caller to the front desk, the
// trunk (a real kamailio on loopback that Voxflow registers to, a sipp UAS behind it as the
// person), and how loud what a peer heard was.
import { decodeG711 } from '../../../server/audio/g711.ts';
import { dbfs } from '../../../server/audio/pcm.ts';
import { afterThisFile } from '../../support/after-this-test.ts';
import { freeUdpPort, startKamailio, type Kamailio } from '../../support/kamailio.ts';
import { startSipRig, type RtpPacketSeen, type SipRig } from '../../support/sip-rig.ts';

export const TRUNK_USER = 'voxtrunk';
export const FRONT_DESK = '+15550006000';

/**
 * A flow whose first state transfers the caller warm to the front desk, `sorry` when that fails.
 * Its lines are short: each is played in real time before the call moves on, and the tests need
 * only hear that something was said.
 */
export const warmDesk = (timeoutSeconds: number, id = `warm-desk-${timeoutSeconds}`) => `
id: ${id}
version: "1.0.0"
initial_state: human
settings:
  base_system_prompt: You answer the phone for a dental clinic.
states:
  human:
    ui: { artifact_type: card, prompt: "Connecting" }
    on_enter:
      say: Connecting you.
      transfer: { to: "${FRONT_DESK}", mode: warm, summary: true, timeout_seconds: ${timeoutSeconds}, on_failed: sorry }
    agent:
      prompt: The caller is being transferred.
  sorry:
    ui: { artifact_type: card, prompt: "Nobody free" }
    on_enter:
      say: Nobody is free. Goodbye.
      end_session: true
    agent:
      prompt: Say goodbye.
`;

export interface WarmDeskSetup {
  trunk: Kamailio;
  rig: SipRig;
  /** Where the trunk sends the person's call: the sipp UAS a test starts there. */
  uasPort: number;
}

/** The trunk and a server registered to it, its lines bound to their flows; closed after the file. */
export async function startWarmDesk(trunkPassword: string, lines: Record<string, string>): Promise<WarmDeskSetup> {
  const uasPort = await freeUdpPort();
  const trunk = await startKamailio({ trunkUser: TRUNK_USER, trunkPassword, did: '+15550001000', outPort: uasPort, forFile: true });
  const rig = await startSipRig({ llm: 'none', transcripts: [], config: { sip: { register: `${TRUNK_USER}@127.0.0.1:${trunk.port}`, registerPassword: trunkPassword } } });
  afterThisFile(() => rig.close());
  await trunk.waitForLine(/REGISTER voxtrunk expires=300/);
  for (const [line, yaml] of Object.entries(lines)) await rig.bind(line, yaml);
  return { trunk, rig, uasPort };
}

/** The loudest 200 ms of what was heard in these packets, in dBFS. */
export function loudest(packets: RtpPacketSeen[], law: 'alaw' | 'mulaw'): number {
  const pcm = decodeG711(law, Buffer.concat(packets.map((p) => p.payload)));
  let top = -Infinity;
  for (let at = 0; at + 1_600 <= pcm.length; at += 1_600) top = Math.max(top, dbfs(pcm.subarray(at, at + 1_600)));
  return top;
}
