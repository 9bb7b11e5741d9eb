// Before Talk, the Talk tab says what a session will cost a minute, part by part
// and honest about when each part is charged, with the balance and the minutes it pays for. The
// server has paid speech-to-text and model (the fakes, on the server's keys) and the embedded
// voice; the account then serves the model with its own key, set in Settings, and the figure
// follows. An account whose balance cannot pay a first minute is told before it tries.
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVoiceRig, type VoiceRig } from '../support/voice-server.ts';
import { launchChromium, screenshot, tempDir, writeMicWav, type TestBrowser } from './browser.ts';
import { signInBrowser } from './studio.ts';

describe('the Talk tab says what a session costs before Talk', () => {
  let rig: VoiceRig;
  let chromium: TestBrowser;
  let dir: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    dir = await tempDir();
    [rig, chromium] = await Promise.all([startVoiceRig(), writeMicWav(dir.path, null).then((wav) => launchChromium({ micWav: wav }))]);
  });
  afterAll(async () => {
    await chromium?.close();
    await rig?.close();
    await dir?.remove();
  });

  /** The Talk tab of the rig's flow; the cost as a person reads it (one line per paragraph). */
  async function openTestTab(page: Page): Promise<Locator> {
    await page.getByRole('tab', { name: 'Talk', exact: true }).click();
    const panel = page.getByRole('region', { name: 'Test talk' });
    await panel.getByRole('heading', { name: 'Talk to this flow' }).waitFor();
    return panel;
  }
  const costText = async (panel: Locator) => (await panel.getByRole('region', { name: 'What a session costs' }).innerText()).replace(/[ \t]+/g, ' ').trim();

  it('shows each part and the balance, and the model at 0¢ once the account uses its own key', { timeout: 60_000 }, async () => {
    const page = await chromium.newPage();
    await signInBrowser(page, rig.server.url, rig.account);
    await page.goto(`${rig.server.url}/flow-editor?flow=${encodeURIComponent(rig.flowId)}`);
    let panel = await openTestTab(page);
    await expect.poll(() => costText(panel), { timeout: 10_000 }).toContain('Up to 2¢/min');
    const before = await costText(panel);
    expect(before).toContain('Up to 2¢/min: model 1¢ (server key), once the agent answers; voice 0¢ (embedded); speech-to-text 1¢ (server key), only once you speak.');
    expect(before).toContain('Balance $2.00 — about 100 minutes at the full rate.');
    // Before Talk, not after: nothing has started.
    expect(await panel.getByRole('button', { name: 'Talk', exact: true }).isEnabled()).toBe(true);
    await screenshot(page, 'studio-test-talk-cost-1280x800');

    // The designer serves the model with an own key (checked against its model server) in Settings.
    await page.getByRole('link', { name: 'Settings' }).click();
    const llm = page.getByRole('form', { name: 'Language model' });
    await llm.getByLabel(/^Base URL/).fill(rig.openai.url);
    await llm.getByLabel('API key').fill('sk-own-model-key-0123456789');
    await llm.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Language model: saved.' }).waitFor();

    // Back in the editor, the same flow: the model is no longer charged.
    await page.getByRole('link', { name: 'Editor' }).click();
    panel = await openTestTab(page);
    await expect.poll(() => costText(panel), { timeout: 10_000 }).toContain('Up to 1¢/min');
    const after = await costText(panel);
    expect(after).toContain('Up to 1¢/min: model 0¢ (your key); voice 0¢ (embedded); speech-to-text 1¢ (server key), only once you speak.');
    expect(after).toContain('Balance $2.00 — about 200 minutes at the full rate.');
    expect(chromium.pageErrors).toEqual([]);
    await page.close();
  });

  it('says before Talk when the balance cannot pay a first minute', { timeout: 30_000 }, async () => {
    const accountId = (await rig.server.app.services.store.accounts.findByEmail(rig.account.email))!.id;
    // The own model key is gone again: a minute is 2¢, and 1¢ is left.
    await rig.server.request('PATCH', '/v1/providers', { jwt: rig.account.jwt, body: { llm_api_key: null, llm_base_url: null } });
    await rig.server.app.services.store.credits.debit(accountId, 199, { idempotencyKey: `cost-test:${accountId}` });
    const page = await chromium.newPage();
    await signInBrowser(page, rig.server.url, rig.account);
    await page.goto(`${rig.server.url}/flow-editor?flow=${encodeURIComponent(rig.flowId)}`);
    const panel = await openTestTab(page);
    await expect.poll(() => costText(panel), { timeout: 10_000 }).toContain('Up to 2¢/min');
    const cost = await costText(panel);
    expect(cost).toContain('Balance $0.01 — less than a minute at the full rate.');
    expect(await panel.getByRole('region', { name: 'What a session costs' }).getByRole('alert').innerText()).toContain('Not enough credit for a first minute');
    await page.close();
  });
});
