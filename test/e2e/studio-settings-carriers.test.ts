// The carriers' credentials in Settings → Provider keys: the designer types their Twilio account
// SID and auth token; a SID of the wrong shape is refused in words and nothing is saved; once
// saved, the SID reads back whole and the token only masked, never in the page again, a reload
// included; clearing asks first.
import { describe, expect, it } from 'vitest';
import { studioSuite } from './studio-screens-server.ts';

const SID = 'AC0123456789abcdef0123456789abcdef';
const TOKEN = 'twilio-auth-token-9f8e7d6c5b4a';

describe('carrier credentials in Settings', () => {
  const rig = studioSuite();
  const stored = async () => (await rig().server.request('GET', '/v1/providers', { jwt: rig().account.jwt })).body as Record<string, string | null>;

  it('saves Twilio credentials: the SID shown whole, the token only masked; a bad SID refused in words; clearing asks first', { timeout: 60_000 }, async () => {
    const page = await rig().open('/settings');
    const carriers = page.getByRole('group', { name: 'Phone carriers' });
    await carriers.waitFor();
    // Every carrier's fields, as the API names them.
    for (const name of ['Twilio', 'Telnyx', 'Plivo']) await carriers.getByRole('form', { name }).waitFor();
    const twilio = carriers.getByRole('form', { name: 'Twilio' });
    expect(await twilio.innerText()).toContain('Not set up');
    const telnyxLabels = await carriers.getByRole('form', { name: 'Telnyx' }).locator('label > span:first-child').allInnerTexts();
    expect(telnyxLabels).toEqual(['API key', 'Public key', 'TeXML account id', 'TeXML application id']);
    expect(await twilio.getByLabel('Auth token').getAttribute('type')).toBe('password');

    await twilio.getByLabel('Account SID').fill('AC123');
    await twilio.getByLabel('Auth token').fill(TOKEN);
    await twilio.getByRole('button', { name: 'Save' }).click();
    const alert = twilio.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toBe('Nothing was saved: Account SID must be AC followed by 32 lowercase hex digits (Twilio console: Account Info).');
    // The token typed is gone from the page even though the save failed.
    expect(await twilio.getByLabel('Auth token').inputValue()).toBe('');
    expect(await stored()).toMatchObject({ twilio_account_sid: null, twilio_auth_token: null });

    await twilio.getByLabel('Account SID').fill(SID);
    await twilio.getByLabel('Auth token').fill(TOKEN);
    await twilio.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Twilio: saved.' }).count()).toBe(1);
    const view = await stored();
    expect(view.twilio_account_sid).toBe(SID);
    expect(view.twilio_auth_token).not.toBeNull();
    expect(view.twilio_auth_token).not.toContain(TOKEN);
    expect(await twilio.getByLabel('Account SID').inputValue()).toBe(SID);
    expect(await twilio.getByTestId('masked-twilio_auth_token').innerText()).toBe(view.twilio_auth_token);
    expect(await twilio.getByLabel(/^Auth token/).inputValue()).toBe('');
    expect(await twilio.innerText()).toContain('Credentials on file');

    await page.reload();
    const again = page.getByRole('group', { name: 'Phone carriers' }).getByRole('form', { name: 'Twilio' });
    await again.getByTestId('masked-twilio_auth_token').waitFor();
    expect(await again.getByLabel('Account SID').inputValue()).toBe(SID);
    expect(await page.content()).not.toContain(TOKEN);

    await again.getByRole('button', { name: 'Clear' }).click();
    const dialog = page.getByRole('dialog', { name: 'Clear your Twilio credentials?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await stored()).twilio_account_sid).toBe(SID);
    await again.getByRole('button', { name: 'Clear' }).click();
    await page.getByRole('dialog', { name: 'Clear your Twilio credentials?' }).getByRole('button', { name: 'Clear credentials' }).click();
    await expect.poll(async () => again.innerText()).toContain('Not set up');
    expect(await stored()).toMatchObject({ twilio_account_sid: null, twilio_auth_token: null });
    // The browser logs the refused save (422), which this test provoked; nothing else.
    expect(rig().chromium.pageErrors.filter((error) => !error.includes('status of 422'))).toEqual([]);
    await page.close();
  });
});
