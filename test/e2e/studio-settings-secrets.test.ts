// Settings → Secrets, as a designer meets it: a flow with http tools says under the canvas that
// the account has no tool signing secret and links to the section; there the secret is made in one
// click and shown once; other secrets are set, replaced and deleted by name, and no value is ever
// shown again (nor sent back by the server). Once the signing secret exists, the flow's warning is
// gone.
import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { WAIT, openFlow } from './studio-editor-page.ts';
import { studioSuite } from './studio-screens-server.ts';

const BOOKING = readFileSync(new URL('../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8');

describe('Settings → Secrets', () => {
  const rig = studioSuite();

  it('leads from a flow with http tools to its missing signing secret, makes it in one click and shows it once', { timeout: 90_000 }, async () => {
    const { page } = await openFlow(rig(), 'Booking', BOOKING);
    const notice = page.getByTestId('account-notice');
    await notice.waitFor(WAIT);
    expect(await notice.innerText()).toContain('no tool signing secret');
    await notice.getByRole('button', { name: 'Set it in Settings' }).click();

    await page.waitForURL(/\/settings\?section=secrets$/);
    const section = page.getByRole('region', { name: 'Secrets' });
    await expect.poll(() => page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe('secrets-title');
    await section.getByRole('button', { name: 'Create signing secret' }).click();
    const reveal = section.getByRole('region', { name: 'Your tool signing secret' });
    await reveal.waitFor(WAIT);
    const secret = await reveal.getByTestId('new-signing-secret').innerText();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    // The server took that value: a request signed with it verifies as the engine signs them.
    expect(() => new Webhook(secret).sign('msg_1', new Date(), '{}')).not.toThrow();
    const listed = await rig().server.request('GET', '/v1/secrets', { apiKey: rig().account.apiKey });
    expect(listed.body.map((s: { name: string }) => s.name)).toEqual(['tool_signing_secret']);
    expect(listed.text).not.toContain(secret.slice(6));

    await reveal.getByRole('button', { name: "Done, I've copied it" }).click();
    await reveal.waitFor({ state: 'hidden' });
    expect(await page.content()).not.toContain(secret.slice(6));
    await section.getByRole('cell', { name: 'tool_signing_secret', exact: true }).waitFor(WAIT);
    await expect.poll(() => section.getByRole('button', { name: 'Replace signing secret' }).isVisible()).toBe(true);

    // Back in the editor, the flow no longer warns.
    await page.goBack();
    await page.locator('.svelte-flow__node').first().waitFor(WAIT);
    await page.getByRole('region', { name: 'Problems' }).waitFor(WAIT);
    await expect.poll(() => notice.count(), { timeout: 10_000 }).toBe(0);
  });

  it('sets, replaces and deletes a secret by name, never showing a value again', { timeout: 90_000 }, async () => {
    const page = await rig().open('/settings');
    const section = page.getByRole('region', { name: 'Secrets' });
    const form = section.getByRole('form', { name: 'Set a secret' });
    await form.getByLabel('Name').fill('bad name!');
    await section.getByText('A name is 1 to 64 letters, digits, _ or -.').waitFor(WAIT);
    expect(await form.getByRole('button', { name: 'Save' }).isDisabled()).toBe(true);

    await form.getByLabel('Name').fill('crm_token');
    await form.getByLabel('Value').fill('first-value-0001');
    await form.getByRole('button', { name: 'Save' }).click();
    await section.getByRole('status').filter({ hasText: 'Saved “crm_token”' }).waitFor(WAIT);
    await section.getByRole('cell', { name: 'crm_token', exact: true }).waitFor(WAIT);
    expect(await form.getByLabel('Value').inputValue()).toBe('');

    await section.getByRole('button', { name: 'Replace crm_token' }).click();
    expect(await form.getByLabel('Name').inputValue()).toBe('crm_token');
    await expect.poll(() => page.evaluate(() => (globalThis as any).document.activeElement?.type)).toBe('password');
    await form.getByLabel('Value').fill('second-value-0002');
    await form.getByRole('button', { name: 'Replace' }).click();
    await section.getByRole('status').filter({ hasText: 'Replaced “crm_token”' }).waitFor(WAIT);
    for (const value of ['first-value-0001', 'second-value-0002']) {
      expect(await page.content()).not.toContain(value);
      expect((await rig().server.request('GET', '/v1/secrets', { apiKey: rig().account.apiKey })).text).not.toContain(value);
    }

    await section.getByRole('button', { name: 'Delete crm_token' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete secret' }).click();
    await section.getByRole('status').filter({ hasText: 'Deleted “crm_token”' }).waitFor(WAIT);
    expect(await section.getByRole('cell', { name: 'crm_token', exact: true }).count()).toBe(0);
    const listed = await rig().server.request('GET', '/v1/secrets', { apiKey: rig().account.apiKey });
    expect(listed.body.map((s: { name: string }) => s.name)).not.toContain('crm_token');
  });
});
