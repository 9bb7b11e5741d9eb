// Shared set-up for the studio's browser tests: a real server (which serves the Vite build of
// renderer/ at /), Debian Chromium at 1280×800, and a signed-in account. Signing in through the
// form is tested once (studio-sign-in); the other tests give the browser the refresh cookie a
// sign-in leaves (signInBrowser), so each starts on its own screen.
import type { Dialog, Page } from 'playwright-core';
import { afterAll, afterEach } from 'vitest';
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

/**
 * The page a describe block's tests share (or a file's, at its top level), kept between its tests:
 * a fresh page costs its renderer and the browser 0.2–0.5 s of CPU (docs/testing.md, "What one
 * studio page costs Chromium"). A test that failed has the page closed, so the next starts on a
 * fresh one instead of on whatever the failure left (a dialog, a half-made edit); the page is closed
 * after the block. `reach(page)` takes the kept page to where the next test starts, accepting the
 * studio's "leave without saving?" on the way; when it cannot (a modal left open over the
 * sidebar) the page is closed and `fresh()` opens a new one, as when none is kept.
 */
export function keptPage<A extends unknown[], T>(options: { reach(page: Page, ...args: A): Promise<T>; fresh(...args: A): Promise<{ page: Page; value: T }> }): (...args: A) => Promise<T> {
  let kept: Page | null = null;
  const drop = async () => {
    const page = kept;
    kept = null;
    await page?.context().close().catch(() => {});
  };
  afterEach(async ({ task }) => {
    if (task.result?.state === 'fail') await drop();
  });
  afterAll(drop);
  return async (...args) => {
    const page = kept && !kept.isClosed() ? kept : null;
    if (page) {
      const leave = (dialog: Dialog) => void dialog.accept();
      page.on('dialog', leave);
      try {
        return await options.reach(page, ...args);
      } catch {
        await drop();
      } finally {
        page.off('dialog', leave);
      }
    }
    const opened = await options.fresh(...args);
    kept = opened.page;
    return opened.value;
  };
}

/**
 * For tests that each start on one screen of the sidebar: the first opens a page at `path`; each
 * later one goes to another screen of the sidebar (Flows, or Settings from the flows) and back to
 * `link`, so the screen is drawn afresh with what it loads, as a designer coming back to it sees
 * it. Tests leave the page open (keptPage).
 */
export function screenOnOnePage(rig: () => StudioRig, screen: { path: string; link: string }): () => Promise<Page> {
  return keptPage<[], Page>({
    async reach(page) {
      const nav = page.getByRole('navigation', { name: 'Studio' });
      const [via, viaPath] = screen.link === 'Flows' ? ['Settings', '/settings'] : ['Flows', '/'];
      await nav.getByRole('link', { name: via, exact: true }).click({ timeout: 5_000 });
      await page.waitForURL((url) => url.pathname === viaPath, { timeout: 5_000 });
      await nav.getByRole('link', { name: screen.link, exact: true }).click({ timeout: 5_000 });
      await page.waitForURL((url) => url.pathname + url.search === screen.path, { timeout: 5_000 });
      return page;
    },
    async fresh() {
      const page = await rig().open(screen.path);
      return { page, value: page };
    },
  });
}
