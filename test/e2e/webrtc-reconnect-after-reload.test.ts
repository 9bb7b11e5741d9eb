import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUESSING_GAME_RULES, startVoiceRig, type VoiceRig } from '../support/voice-server.ts';
import { launchChromium, pageEvents, signIn, tempDir, writeMicWav, type TestBrowser } from './browser.ts';

// A person reloads the /test page mid-session (or the tab crashes): the page never hangs up.
// Connecting again must give a working new session, and the server must notice the old peer is
// gone and end its session instead of keeping it (and its billing) alive.
describe('reconnecting after a page reload', () => {
  let rig: VoiceRig;
  let chromium: TestBrowser;
  let dir: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    dir = await tempDir();
    [rig, chromium] = await Promise.all([
      // The defaults (10 s grace, 60 s idle) are for real networks; a test cannot wait that long.
      startVoiceRig({ rules: GUESSING_GAME_RULES, webrtc: { disconnectGraceMs: 1_000, idleTimeoutMs: 5_000 } }),
      writeMicWav(dir.path, null).then((wav) => launchChromium({ micWav: wav })),
    ]);
  });
  afterAll(async () => {
    await chromium?.close();
    await rig?.close();
    await dir?.remove();
  });

  const text = (page: Page, selector: string) => page.locator(selector).innerText();

  async function connectFromPage(page: Page): Promise<string> {
    await page.goto(`${rig.server.url}/test`);
    await signIn(page, rig.account.email, rig.account.password);
    await page.getByLabel('Flow').selectOption({ label: 'Guessing game' });
    await page.getByRole('button', { name: 'Connect' }).click();
    await expect.poll(() => text(page, '#status'), { timeout: 10_000 }).toBe('Connected · flow session');
    await expect.poll(() => text(page, '#state-name'), { timeout: 5_000 }).toBe('setup');
    const started = (await pageEvents(page)).find((e) => e.type === 'session_started');
    return started!.session_id as string;
  }

  const sessionRow = async (id: string) => {
    const listed = await rig.server.request('GET', '/v1/sessions', { jwt: rig.account.jwt });
    return listed.body.find((s: { id: string }) => s.id === id);
  };

  it('starts a new working session after a reload and ends the abandoned one on the server', { timeout: 60_000 }, async () => {
    const engine = rig.server.app.services.engine;
    const page = await chromium.newPage();
    const first = await connectFromPage(page);
    expect(engine.activeSessions).toBe(1);

    await page.reload();
    // The reloaded page knows nothing of the old connection.
    expect(await text(page, '#status')).toBe('Not connected');
    const second = await connectFromPage(page);
    expect(second).not.toBe(first);

    // The new session works: a typed turn starts the game.
    await page.getByLabel('Type a turn').fill("I'm ready");
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => text(page, '#state-name'), { timeout: 10_000 }).toBe('playing');
    await expect.poll(() => page.locator('#transcript .line.user .text').allInnerTexts(), { timeout: 5_000 }).toEqual(["I'm ready"]);
    // While the agent says its line, Interrupt stops it.
    // (A typed turn over the greeting interrupted it already: count from here.)
    const interruptions = async () => (await pageEvents(page)).filter((e) => e.type === 'interrupted').length;
    await page.getByText('Agent speaking…').waitFor({ timeout: 30_000 });
    const before = await interruptions();
    await page.getByRole('button', { name: 'Interrupt' }).click();
    await page.getByText('Agent interrupted').waitFor({ timeout: 5_000 });
    expect(await interruptions()).toBe(before + 1);

    // The old one was ended by the server, for a reason that says the client went away.
    await expect.poll(async () => (await sessionRow(first))?.status, { timeout: 15_000, interval: 250 }).toBe('ended');
    expect(['client_disconnected', 'ice_failed', 'idle_timeout']).toContain((await sessionRow(first)).end_reason);
    expect(engine.activeSessions).toBe(1);
    expect(await sessionRow(second)).toMatchObject({ status: 'connected', transport: 'webrtc' });
    expect(await text(page, '#status')).toBe('Connected · flow session');
  });
});
