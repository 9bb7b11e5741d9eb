// Voxflow registering to a SIP trunk whose registrar (a real kamailio on loopback) refuses
// registrations for a while: it is tried again, after the wait the registration sets (;retry=3:
// 3 s, where the default is 5 s) and twice as long each time after, until it takes one. A file of
// its own, so its waiting runs beside voxflow-registers-to-a-trunk.test.ts. (The second wait, 6 s,
// is the time the test has to put a registrar that takes registrations on the same port: a try
// that finds none waits out the REGISTER's 32 s.)
import { describe, expect, it, vi } from 'vitest';
import { afterThisTest } from '../../support/after-this-test.ts';
import { startKamailio } from '../../support/kamailio.ts';
import { startSipRig } from '../../support/sip-rig.ts';
import { RIG_START_TIMEOUT_MS } from '../../support/voice-server.ts';

const TRUNK_USER = 'voxtrunk';
const TRUNK_PASSWORD = 'trunk-secret-4242';
const DID = '+15550001000';

async function registeringRig(registrarPort: number): Promise<void> {
  const rig = await startSipRig({ config: { sip: { register: `${TRUNK_USER}@127.0.0.1:${registrarPort};expires=60;retry=3`, registerPassword: TRUNK_PASSWORD } } });
  afterThisTest(() => rig.close());
}

describe('Voxflow registering to a SIP trunk that refuses registrations', () => {
  it('tries a refusing registrar again after the set wait, then twice as long, and registers once it takes registrations', { timeout: RIG_START_TIMEOUT_MS + 90_000 }, async () => {
    const refusing = await startKamailio({ trunkUser: TRUNK_USER, trunkPassword: TRUNK_PASSWORD, did: DID, refuse: true });
    await registeringRig(refusing.port);
    await vi.waitFor(() => expect(refusing.refused().length).toBeGreaterThanOrEqual(2), { timeout: 30_000, interval: 200 });
    const [first, second] = refusing.refused();
    // Not a flood: the second try came the set 3 s after the first (a timer can only be late: the
    // times are the registrar's, when each REGISTER reached it).
    expect((second! - first!) / 1000).toBeGreaterThanOrEqual(2.95);
    await refusing.stop();
    const trunk = await startKamailio({ trunkUser: TRUNK_USER, trunkPassword: TRUNK_PASSWORD, did: DID, port: refusing.port });
    await trunk.waitForLine(/REGISTER voxtrunk expires=60/, 40_000);
    // The wait grew: the next try came at least twice the first wait after the second refusal.
    expect((trunk.registers()[0]!.at - second!) / 1000).toBeGreaterThanOrEqual(5.95);
  });
});
