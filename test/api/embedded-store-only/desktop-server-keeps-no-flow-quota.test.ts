// The desktop app's own server keeps no flow quota, even when the environment sets one for
// hosting (flow-storage-quota.test.ts has the hosted server's). It always runs on its embedded
// store, whatever the test project, so it runs once.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLocalSignIn } from '../../../electron/local-account.ts';
import { startEmbeddedServer } from '../../../electron/server-host.ts';
import { flowOfAbout } from '../../support/flow-of-about.ts';

/** The hosted quota the environment sets: a quarter of a MiB, a few 50 KiB flows past it. */
const QUOTA_MIB = 0.25;

describe('the desktop app’s own server', () => {
  it('keeps no flow quota, even when the environment sets one for hosting', { timeout: 120_000 }, async () => {
    const userData = await mkdtemp(join(tmpdir(), 'voxflow-userdata-'));
    const desktop = await startEmbeddedServer(userData, { VOXFLOW_LOG_LEVEL: 'silent', VOXFLOW_FLOWS_PER_ACCOUNT: '1', VOXFLOW_FLOW_STORAGE_MB: String(QUOTA_MIB) }, { announce: () => {} });
    try {
      const local = await createLocalSignIn(desktop.app.services, desktop.config.dataDir)();
      const headers = { authorization: `Bearer ${local.access_token}`, 'content-type': 'application/json', origin: desktop.origin };
      for (let i = 0; i < 6; i++) {
        const response = await fetch(`${desktop.origin}/v1/flows`, { method: 'POST', headers, body: JSON.stringify({ name: `Local ${i}`, yaml_content: flowOfAbout(50, `local${i}`) }) });
        expect(response.status, await response.text().then((t) => t.slice(0, 200))).toBe(201);
      }
    } finally {
      await desktop.close();
      await rm(userData, { recursive: true, force: true });
    }
  });
});
