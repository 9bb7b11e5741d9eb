// Shared set-up for the studio's browser tests: a real server (which serves the Vite build of
// renderer/ at /), Debian Chromium at 1280×800, and a signed-in account. Signing in through the
// form is tested once (studio-sign-in); the other tests give the browser the refresh cookie a
// sign-in leaves (signInBrowser), so each starts on its own screen.
import type { Page } from 'playwright-core';
import { createAccount, startTestServer, type TestServer } from '../support/server.ts';
import { launchChromium, tempDir, writeMicWav, type TestBrowser } from './browser.ts';

export interface StudioRig {
  server: TestServer;
  chromium: TestBrowser;
  account: Awaited<ReturnType<typeof createAccount>>;
  /**
   * A new page, signed in as `account`, opened at `path` (default `/`), 1280×800 unless told;
   * with the editor's autosave off when the rig was started with `autosave: false`.
   */
  open(path?: string, viewport?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

/**
 * Signs the page's browser in as `account` the way the sign-in form leaves it: the server's
 * HttpOnly refresh cookie, from which every page of that browser gets its access token.
 */
export async function signInBrowser(page: Page, serverUrl: string, account: { email: string; password: string }): Promise<void> {
  const login = await fetch(`${serverUrl}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: account.email, password: account.password }) });
  if (login.status !== 200) throw new Error(`login failed: ${login.status}`);
  const [name, value] = login.headers.get('set-cookie')!.split(';')[0]!.split('=') as [string, string];
  // Exactly the cookie the server sets (Path=/auth), so signing out clears it.
  await page.context().addCookies([{ name, value, domain: new URL(serverUrl).hostname, path: '/auth', httpOnly: true, sameSite: 'Strict' }]);
  // And the flag the studio sets when it signs in, so it asks the server to refresh.
  await page.context().addInitScript(() => (globalThis as any).localStorage.setItem('voxflow.signed-in', '1'));
}

/** Where the studio keeps its Settings > Editor "Save drafts automatically" choice in the browser. */
export const AUTOSAVE_SETTING = 'voxflow.autosave';

/**
 * Turns the editor's autosave off for every page this page's browser context opens from now on,
 * as Settings > Editor "Save drafts automatically" unticked leaves it: for tests about unsaved
 * changes (the leave guard, "Unsaved changes", a draft not yet written), which autosave would
 * otherwise save a moment later. Call before the page's first navigation, or reload after.
 */
export async function turnOffAutosave(page: Page): Promise<void> {
  await page.context().addInitScript((key) => (globalThis as any).localStorage.setItem(key, '0'), AUTOSAVE_SETTING);
}

export async function startStudioRig(options: { server?: TestServer; micText?: string | null; autosave?: boolean } = {}): Promise<StudioRig> {
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
      await signInBrowser(page, server.url, account);
      if (options.autosave === false) await turnOffAutosave(page);
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
