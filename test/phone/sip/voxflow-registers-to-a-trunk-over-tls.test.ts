// Voxflow registering to a SIP trunk over TLS (`--sip-register sips:…`), against a real kamailio
// with its TLS module on loopback. The test makes its own certificate authority and, signed by it,
// a certificate for 127.0.0.1 (openssl, in a temp folder); Voxflow checks the registrar's
// certificate against that CA (VOXFLOW_SIP_REGISTER_CA). The REGISTER is challenged and taken over
// the TLS connection, renewed on it, and removed when the server stops; a caller dialling the
// trunk's number reaches the flow, the trunk sending the call on to us over TLS. A registrar whose
// certificate another CA signed is refused: nothing is registered, and /health says why.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { afterThisTest } from '../../support/after-this-test.ts';
import { startKamailio } from '../../support/kamailio.ts';
import { listenForRtp, runSipp, startSipRig, type SipRig, goodbyeFlow } from '../../support/sip-rig.ts';
import { RIG_START_TIMEOUT_MS } from '../../support/voice-server.ts';

const TRUNK_USER = 'voxtrunk';
const TRUNK_PASSWORD = 'trunk-secret-5151';
const DID = '+15550001000';

const GOODBYE_YAML = goodbyeFlow('trunk-goodbye');

interface Certificates {
  caFile: string;
  /** A CA that signed nothing here: a registrar checked against it is refused. */
  otherCaFile: string;
  certFile: string;
  keyFile: string;
}

/** A CA, another CA, and a certificate for 127.0.0.1 signed by the first; removed after the test. */
async function makeCertificates(): Promise<Certificates> {
  const dir = await mkdtemp(join(tmpdir(), 'voxflow-sip-ca-'));
  afterThisTest(() => rm(dir, { recursive: true, force: true }));
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=voxflow test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign');
  openssl('req', '-x509', ...ec, '-keyout', 'other-ca.key', '-out', 'other-ca.pem', '-days', '1', '-subj', '/CN=another CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign');
  openssl('req', '-new', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  await writeFile(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '1', '-extfile', 'server.ext');
  return { caFile: join(dir, 'ca.pem'), otherCaFile: join(dir, 'other-ca.pem'), certFile: join(dir, 'server.pem'), keyFile: join(dir, 'server.key') };
}

async function registeringRig(target: string, certificates: Certificates, caFile: string): Promise<SipRig & { stop(): Promise<void> }> {
  // The account lists no source on loopback: the trunk's calls are taken because we registered there.
  const rig = await startSipRig({
    allowedSources: '10.9.9.9',
    tls: { certFile: certificates.certFile, keyFile: certificates.keyFile },
    config: { sip: { register: target, registerPassword: TRUNK_PASSWORD, registerCa: caFile } },
  });
  let closed: Promise<void> | null = null;
  const stop = () => (closed ??= rig.close());
  afterThisTest(stop);
  return { ...rig, stop };
}

const health = async (rig: SipRig) => (await rig.server.request('GET', '/health')).body;

describe('Voxflow registering to a SIP trunk over TLS', () => {
  it('registers over TLS with digest, takes the trunk\'s call over TLS on the number\'s flow, renews, and unregisters', { timeout: RIG_START_TIMEOUT_MS + 90_000 }, async () => {
    const certificates = await makeCertificates();
    const trunk = await startKamailio({ trunkUser: TRUNK_USER, trunkPassword: TRUNK_PASSWORD, did: DID, tls: { certFile: certificates.certFile, keyFile: certificates.keyFile } });
    const rig = await registeringRig(`sips:${TRUNK_USER}@127.0.0.1:${trunk.tlsPort};expires=60`, certificates, certificates.caFile);
    expect(await trunk.waitForLine(/REGISTER voxtrunk expires=60/)).toMatch(new RegExp(`contact=<sip:voxtrunk@127\\.0\\.0\\.1:${rig.tlsPort};transport=tls> proto=tls`));
    await vi.waitFor(async () => expect((await health(rig)).sip_registration).toEqual({ state: 'registered', error: null }), { timeout: 10_000, interval: 100 });
    await rig.bind(DID, GOODBYE_YAML);

    // The caller reaches the trunk over UDP; the trunk sends the call on to our TLS listener.
    const ear = await listenForRtp();
    const run = await runSipp({ rig, scenario: 'call-through-trunk.xml', service: DID, rtpPort: ear.port, remotePort: trunk.port });
    expect(run.code, run.output).toBe(0);
    expect(trunk.lines.some((l) => l.includes(`INVITE DID to sip:voxtrunk@127.0.0.1:${rig.tlsPort};transport=tls`))).toBe(true);
    const sessions: Array<{ id: string; transport: string }> = (await rig.server.request('GET', '/v1/sessions', { apiKey: rig.account.apiKey })).body;
    const call = sessions.find((s) => s.transport === 'sip');
    expect(call).toBeDefined();
    await vi.waitFor(
      async () => expect((await rig.server.request('GET', `/v1/sessions/${call!.id}`, { apiKey: rig.account.apiKey })).body).toMatchObject({ status: 'ended', to: DID, end_reason: 'flow_ended' }),
      { timeout: 20_000, interval: 100 },
    );
    expect(ear.packets.filter((p) => p.payloadType === 0).length).toBeGreaterThan(20);

    // Renewed over TLS at about half of the 8 s granted; removed over TLS when the server stops.
    await vi.waitFor(() => expect(trunk.lines.filter((l) => /REGISTER voxtrunk expires=60 .* proto=tls/.test(l)).length).toBeGreaterThanOrEqual(2), { timeout: 30_000, interval: 200 });
    await rig.stop();
    expect(await trunk.waitForLine(/REGISTER voxtrunk expires=0/, 10_000)).toMatch(/proto=tls/);
    expect(trunk.lines.join('\n')).not.toContain(TRUNK_PASSWORD);
  });

  it('refuses a registrar whose certificate another CA signed, and /health says why', { timeout: RIG_START_TIMEOUT_MS + 60_000 }, async () => {
    const certificates = await makeCertificates();
    const trunk = await startKamailio({ trunkUser: TRUNK_USER, trunkPassword: TRUNK_PASSWORD, did: DID, tls: { certFile: certificates.certFile, keyFile: certificates.keyFile } });
    const rig = await registeringRig(`sips:${TRUNK_USER}@127.0.0.1:${trunk.tlsPort};expires=60`, certificates, certificates.otherCaFile);
    const registration = await vi.waitFor(
      async () => {
        const body = await health(rig);
        expect(body.sip_registration?.state).toBe('failing');
        return body.sip_registration;
      },
      { timeout: 20_000, interval: 200 },
    );
    expect(registration.error).toMatch(new RegExp(`the certificate of 127\\.0\\.0\\.1:${trunk.tlsPort} was refused: .*VOXFLOW_SIP_REGISTER_CA`));
    // The rest of the node is fine: a failing registration does not take it out of a load balancer.
    expect((await health(rig)).status).toBe('ok');
    expect(trunk.registers()).toEqual([]);
  });
});
