// Shared set-up for the studio's browser tests: a real server (which serves the Vite build of
// renderer/ at /), Debian Chromium at 1280×800, and a signed-in account. Signing in through the
// form is tested once (studio-sign-in); the other tests put the token where the studio keeps it,
// so each starts on its own screen.
import type { Page } from 'playwright-core';
import { createAccount, startTestServer, type TestServer } from '../support/server.ts';
import { launchChromium, tempDir, writeMicWav, type TestBrowser } from './browser.ts';

export interface StudioRig {
  server: TestServer;
  chromium: TestBrowser;
  account: Awaited<ReturnType<typeof createAccount>>;
  /** A new page, signed in as `account`, opened at `path` (default `/`), 1280×800 unless told. */
  open(path?: string, viewport?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

export async function startStudioRig(options: { server?: TestServer; micText?: string | null } = {}): Promise<StudioRig> {
  const dir = await tempDir();
  const [server, chromium] = await Promise.all([
    options.server ? Promise.resolve(options.server) : startTestServer({}, { voice: true }),
    writeMicWav(dir.path, options.micText ?? null).then((wav) => launchChromium({ micWav: wav })),
  ]);
  const account = await createAccount(server);
  return {
    server,
    chromium,
    account,
    async open(path = '/', viewport) {
      const page = await chromium.newPage(viewport);
      await page.goto(server.url + '/sign-in');
      await page.evaluate(
        ([token, email]) => {
          (globalThis as any).sessionStorage.setItem('voxflow.access_token', token!);
          (globalThis as any).sessionStorage.setItem('voxflow.email', email!);
        },
        [account.jwt, account.email],
      );
      await page.goto(server.url + path);
      return page;
    },
    async close() {
      await chromium.close();
      if (!options.server) await server.close();
      await dir.remove();
    },
  };
}
