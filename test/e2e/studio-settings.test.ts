import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { screenshot } from './browser.ts';
import { startFakeOpenAI } from '../fakes/openai-server.ts';
import { studioSuite } from './studio-screens-server.ts';
import { screenOnOnePage } from './studio.ts';

// The settings screen against the real server: what it shows must be what the API does — a key
// created here works with X-Service-Key and stops working when revoked; a provider key typed
// here is stored and never comes back in full.
describe('the studio settings screen', () => {
  const rig = studioSuite();
  // Each test comes to the settings screen afresh, on one page for the file (screenOnOnePage).
  const settingsPage = screenOnOnePage(rig, { path: '/settings', link: 'Settings' });

  async function openSettings(): Promise<Page> {
    const page = await settingsPage();
    await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
    return page;
  }
  const flowsWithKey = async (key: string) => (await fetch(`${rig().server.url}/v1/flows`, { headers: { 'X-Service-Key': key } })).status;

  it('creates an API key shown once with a copy button, lists only its prefix, and the key works', { timeout: 40_000 }, async () => {
    const page = await openSettings();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: rig().server.url });
    const section = page.getByRole('region', { name: 'API keys' });
    await section.getByLabel('Label').fill('backend');
    await section.getByRole('button', { name: 'Create key' }).click();

    const reveal = page.getByRole('region', { name: 'Your new key “backend”' });
    await reveal.waitFor();
    expect(await reveal.innerText()).toContain("It won't be shown again");
    const key = await reveal.getByTestId('new-api-key').innerText();
    expect(key).toMatch(/^vfk_[0-9A-Za-z]{40,}$/);
    await reveal.getByRole('button', { name: 'Copy the new API key' }).click();
    await reveal.getByRole('button', { name: 'Copy the new API key' }).filter({ hasText: 'Copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);

    const row = section.getByRole('table', { name: 'API keys' }).getByRole('row').filter({ hasText: 'backend' });
    expect(await row.innerText()).toContain(`${key.slice(0, 12)}…`);
    expect(await row.innerText()).not.toContain(key);
    expect(await flowsWithKey(key)).toBe(200);

    await reveal.getByRole('button', { name: "Done, I've copied it" }).click();
    await reveal.waitFor({ state: 'hidden' });
    expect(await page.content()).not.toContain(key.slice(12));
    // After a reload the key is nowhere: only its prefix.
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain(key.slice(12));
  });

  it('revokes a key only after confirmation, and the key stops working at once', { timeout: 40_000 }, async () => {
    const created = await rig().server.request('POST', '/auth/api-keys?label=staging', { jwt: rig().account.jwt });
    const key: string = created.body.key;
    expect(await flowsWithKey(key)).toBe(200);

    const page = await openSettings();
    const revoke = page.getByRole('button', { name: 'Revoke staging' });
    await revoke.click();
    const dialog = page.getByRole('dialog', { name: 'Revoke “staging”?' });
    expect(await dialog.innerText()).toContain(`${key.slice(0, 12)}…`);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await flowsWithKey(key)).toBe(200);

    await revoke.click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('status').filter({ hasText: 'Revoked “staging”' }).waitFor();
    expect(await revoke.count()).toBe(0);
    expect(await flowsWithKey(key)).toBe(401);
  });

  it('sets a provider key, shows it only masked, and clears it', { timeout: 40_000 }, async () => {
    const secret = 'sk-proj-studio-test-key-7d3f9a1b2c4e';
    const page = await openSettings();
    const llm = page.getByRole('form', { name: 'Language model' });
    await llm.getByLabel('API key').fill(secret);
    await llm.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Language model: saved.' }).waitFor();

    const masked = await llm.getByTestId('masked-llm').innerText();
    const stored = await rig().server.request('GET', '/v1/providers', { jwt: rig().account.jwt });
    expect(masked).toBe(stored.body.llm_api_key);
    expect(masked).toBe('sk-…2c4e');
    expect(await llm.getByLabel('Replace the key').inputValue()).toBe('');
    expect(await page.content()).not.toContain(secret);
    expect(await llm.innerText()).toContain('Your key · not charged to credits');

    await page.reload();
    await llm.getByTestId('masked-llm').waitFor();
    expect(await page.content()).not.toContain(secret);

    await llm.getByRole('button', { name: 'Clear key' }).click();
    await page.getByRole('dialog', { name: 'Clear your language model key?' }).getByRole('button', { name: 'Clear key' }).click();
    await page.getByRole('status').filter({ hasText: 'Language model: key cleared.' }).waitFor();
    expect(await llm.getByTestId('masked-llm').count()).toBe(0);
    expect((await rig().server.request('GET', '/v1/providers', { jwt: rig().account.jwt })).body.llm_api_key).toBeNull();
  });

  // An own key with its own endpoint and model, checked when saved.
  it('sets an own model server: base URL and model saved with the key, a refused key said plainly', { timeout: 40_000 }, async () => {
    const own = await startFakeOpenAI({ apiKey: 'sk-own-model-server-key-1' });
    try {
      const page = await openSettings();
      const llm = page.getByRole('form', { name: 'Language model' });
      await llm.getByLabel(/^Base URL/).fill(own.url);
      await llm.getByLabel(/^Model/).fill('llama3.1');
      await llm.getByLabel(/API key|Replace the key/).fill('sk-wrong-key-for-that-server');
      await llm.getByRole('button', { name: 'Save' }).click();
      await llm.getByRole('alert').filter({ hasText: 'refused this key (401' }).waitFor();
      expect((await rig().server.request('GET', '/v1/providers', { jwt: rig().account.jwt })).body.llm_base_url).toBeNull();

      await llm.getByLabel(/API key|Replace the key/).fill('sk-own-model-server-key-1');
      await llm.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').filter({ hasText: 'Language model: saved.' }).waitFor();
      const stored = (await rig().server.request('GET', '/v1/providers', { jwt: rig().account.jwt })).body;
      expect(stored).toMatchObject({ llm_base_url: own.url, llm_model: 'llama3.1' });
      expect(own.requests.some((r) => r.path === '/v1/models' && r.headers.authorization === 'Bearer sk-own-model-server-key-1')).toBe(true);
      await page.reload();
      await expect.poll(() => llm.getByLabel(/^Base URL/).inputValue()).toBe(own.url);
      expect(await llm.getByLabel(/^Model/).inputValue()).toBe('llama3.1');
      await rig().server.request('PATCH', '/v1/providers', { jwt: rig().account.jwt, body: { llm_api_key: null, llm_base_url: null, llm_model: null } });
    } finally {
      await own.close();
    }
  });

  it("says why the server refused a provider key, and doesn't keep what was typed", { timeout: 30_000 }, async () => {
    const page = await openSettings();
    const stt = page.getByRole('form', { name: 'Speech to text' });
    await stt.getByLabel('API key').fill('short');
    await stt.getByRole('button', { name: 'Save' }).click();
    await stt.getByRole('alert').filter({ hasText: 'An API key is at least 8 characters.' }).waitFor();
    expect(await stt.getByLabel('API key').inputValue()).toBe('');
    expect((await rig().server.request('GET', '/v1/providers', { jwt: rig().account.jwt })).body.stt_api_key).toBeNull();
  });

  it('shows the credits the API reports', { timeout: 30_000 }, async () => {
    const balance = (await rig().server.request('GET', '/v1/credits/balance', { jwt: rig().account.jwt })).body;
    const page = await openSettings();
    const credits = page.getByRole('region', { name: 'Credits' });
    await credits.getByTestId('credit-balance').waitFor();
    expect(await credits.getByTestId('credit-balance').innerText()).toBe(`$${(balance.balance_usd_cents / 100).toFixed(2)}`);
    expect(await credits.getByTestId('credit-rate').innerText()).toBe(`${balance.rate_per_minute_usd_cents}¢/min`);
    expect(await credits.getByTestId('credit-effective-rate').innerText()).toBe(`${balance.effective_rate_per_minute_usd_cents}¢/min`);
  });

  it("explains how to run the server headless, with this server's URL and endpoints", { timeout: 30_000 }, async () => {
    const page = await openSettings();
    const headless = page.getByRole('region', { name: 'Run this server headless' });
    expect(await headless.getByTestId('server-url').innerText()).toBe(rig().server.url);
    await headless.getByText('Healthy').waitFor();
    const text = await headless.innerText();
    const port = new URL(rig().server.url).port;
    expect(text).toContain('npm install && npm run serve');
    expect(text).toContain(`npm run serve -- --host 127.0.0.1 --port ${port}`);
    for (const flag of ['--host', '--port', '--data-dir', '--public-url', 'VOXFLOW_HOST', 'VOXFLOW_PORT', 'VOXFLOW_DATA_DIR', 'VOXFLOW_PUBLIC_URL']) expect(text).toContain(flag);
    expect(text).toContain(`${rig().server.url}/offer`);
    expect(text).toContain(`${rig().server.url.replace('http:', 'ws:')}/v1/ws/<session_token>`);
    expect(await headless.getByRole('link', { name: `${rig().server.url}/test` }).getAttribute('href')).toBe(`${rig().server.url}/test`);
    // What GET /capabilities says this server offers.
    const capabilities = (await rig().server.request('GET', '/capabilities')).body;
    const offered = headless.getByTestId('capabilities');
    await offered.waitFor();
    expect(await offered.innerText()).toMatch(new RegExp(`Text to speech\\s+${capabilities.tts.provider}`));
    expect(await offered.innerText()).toMatch(/Transports\s+WebRTC, WebSocket/);
  });

  it('fits 1280×800 without sideways scrolling', { timeout: 30_000 }, async () => {
    const page = await openSettings();
    await page.getByRole('region', { name: 'Credits' }).getByTestId('credit-balance').waitFor();
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1280);
    expect(await page.evaluate("document.querySelector('main').scrollWidth <= document.querySelector('main').clientWidth")).toBe(true);
    await screenshot(page, 'studio-settings');
    // The section buttons at the top jump to a section and move the focus there.
    await page.getByRole('navigation', { name: 'Settings sections' }).getByRole('button', { name: 'Run headless' }).click();
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Run this server headless');
  });
});
