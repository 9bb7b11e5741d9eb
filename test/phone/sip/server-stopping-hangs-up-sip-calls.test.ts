// A server that stops (SIGTERM, the desktop app quitting) does not leave its SIP callers on a
// dead line: each call hears BYE (and answers it) before the SIP port closes.
import { describe, expect, it, vi } from 'vitest';
import { afterThisTest } from '../../support/after-this-test.ts';
import { PHONE_MENU_YAML } from '../../support/phone-menu-flow.ts';
import { RIG_START_TIMEOUT_MS } from '../../support/voice-server.ts';
import { listenForRtp, runSipp, startSipRig } from '../../support/sip-rig.ts';

describe('a server stopping', () => {
  it('hangs up its SIP calls with BYE before it closes', { timeout: RIG_START_TIMEOUT_MS + 60_000 }, async () => {
    const rig = await startSipRig({ llm: 'none', transcripts: [] });
    let closed = false;
    afterThisTest(async () => {
      if (!closed) await rig.close();
    });
    await rig.bind('1000', PHONE_MENU_YAML);
    const ear = await listenForRtp();
    // The menu waits for keys for ever: only the server stopping ends this call (sipp waits for a BYE).
    const call = runSipp({ rig, scenario: 'hung-up-by-voxflow.xml', service: '1000', rtpPort: ear.port });
    await vi.waitFor(() => expect(ear.packets.length).toBeGreaterThan(25), { timeout: 30_000, interval: 50 });
    expect((await rig.server.request('GET', '/v1/sessions', { apiKey: rig.account.apiKey })).body[0]).toMatchObject({ transport: 'sip', status: 'connected' });
    closed = true;
    await rig.close();
    const run = await call;
    expect(run.code, run.output).toBe(0);
  });
});
