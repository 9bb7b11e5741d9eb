// The desktop app's own server never limits its local account's live sessions, where a hosted
// server with the same settings stops at VOXFLOW_SESSIONS_PER_ACCOUNT (sessions-per-account.test.ts
// has the hosted limit over every transport, on both stores). The desktop server always opens its
// embedded store, whatever the test project, so this runs once.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLocalSignIn } from '../../../electron/local-account.ts';
import { startEmbeddedServer } from '../../../electron/server-host.ts';
import { createAccount, startTestServer } from '../../support/server.ts';
import { wsUrl } from '../../support/voice-client.ts';
import { admitAtOnce, tryConnect } from '../admission-clients.ts';

/** The hosted server's default per-account limit. */
const LIMIT = 10;

describe('the desktop app’s embedded server', () => {
  it('never limits its local account: 15 sessions at once, where a hosted server with the same settings stops at 10', { timeout: 60_000 }, async () => {
    const userData = await mkdtemp(join(tmpdir(), 'voxflow-userdata-'));
    const env = { VOXFLOW_LOG_LEVEL: 'silent' };
    const desktop = await startEmbeddedServer(userData, env, { announce: () => {} });
    const hosted = await startTestServer({});
    try {
      const local = await createLocalSignIn(desktop.app.services, desktop.config.dataDir)();
      const onDesktop = await admitAtOnce(Array.from({ length: 15 }, () => () => tryConnect(wsUrl(desktop.origin, `/ws?mode=assistant&access_token=${local.access_token}`))));
      expect(onDesktop.refused).toEqual([]);
      expect(onDesktop.open).toHaveLength(15);

      const account = await createAccount(hosted);
      const onHosted = await admitAtOnce(Array.from({ length: 15 }, () => () => tryConnect(wsUrl(hosted.url, `/ws?mode=assistant&access_token=${account.jwt}`))));
      expect(onHosted.open).toHaveLength(LIMIT);
      expect(onHosted.refused.map((r) => r.code)).toEqual(Array.from({ length: 5 }, () => 'too_many_sessions'));
      await Promise.all([...onDesktop.open, ...onHosted.open].map((s) => s.end()));
    } finally {
      await hosted.close();
      await desktop.close();
      await rm(userData, { recursive: true, force: true });
    }
  });
});
