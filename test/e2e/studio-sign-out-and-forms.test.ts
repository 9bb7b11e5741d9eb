// What a designer found in the studio's forms, in Chromium against a real server: signing out in
// one tab signs every tab out and the server refuses what the old sign-in held; a refused sign-in
// that answers after a switch to Create account is not shown there; the webhook form says a name
// that cannot be resolved cannot be resolved, and names a refused address once; a flow-settings
// temperature out of range says so where it was typed instead of vanishing; an address with no
// screen shows the studio's not-found page, not the API's JSON.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createAccount } from '../support/server.ts';
import { openFlow, storedYaml, WAIT } from './studio-editor-page.ts';
import { studioSuite } from './studio-screens-server.ts';
import { signInBrowser } from './studio.ts';

describe('the studio’s sign-out and forms', () => {
  const rig = studioSuite();
  const signInHeading = (page: Page) => page.getByRole('heading', { name: 'Sign in' });
  const settingsHeading = (page: Page) => page.getByRole('heading', { name: 'Settings', level: 1 });

  it('signs every tab out at once, and a tab that missed it cannot create an API key with the old sign-in', { timeout: 60_000 }, async () => {
    // An account of its own: signing out ends every sign-in of the account.
    const account = await createAccount(rig().server);
    const first = await rig().chromium.newPage();
    await signInBrowser(first, rig().server.url, account);
    await first.goto(rig().server.url + '/settings');
    const second = await first.context().newPage();
    const tokens: string[] = [];
    second.on('request', (request) => {
      const authorization = request.headers().authorization;
      if (authorization?.startsWith('Bearer ')) tokens.push(authorization.slice(7));
    });
    await second.goto(rig().server.url + '/settings');
    // A third tab that hears nothing from the others (as a tab whose message was lost would).
    const deaf = await first.context().newPage();
    await deaf.addInitScript(() => Object.defineProperty(globalThis, 'BroadcastChannel', { value: undefined }));
    await deaf.goto(rig().server.url + '/settings');
    for (const page of [first, second, deaf]) await settingsHeading(page).waitFor(WAIT);
    expect(tokens.length).toBeGreaterThan(0);

    await first.getByRole('button', { name: 'Sign out' }).click();
    await signInHeading(first).waitFor(WAIT);
    // The other tab follows without being touched.
    await signInHeading(second).waitFor(WAIT);

    // The server refuses the token the second tab held.
    const late = await rig().server.request('POST', '/auth/api-keys?label=late', { jwt: tokens.at(-1)! });
    expect(late.status).toBe(401);

    // The deaf tab still shows Settings; its next request is refused and it goes to sign-in.
    expect(await settingsHeading(deaf).isVisible()).toBe(true);
    const keysSection = deaf.getByRole('region', { name: 'API keys' });
    await keysSection.getByLabel('Label').fill('made after sign-out');
    await keysSection.getByRole('button', { name: 'Create key' }).click();
    await signInHeading(deaf).waitFor(WAIT);
    expect(await deaf.getByText('Your new key').count()).toBe(0);

    // No key was made: the account has only the one it was created with.
    const login = await rig().server.request('POST', '/auth/login', { body: { email: account.email, password: account.password } });
    const keys = await rig().server.request('GET', '/auth/api-keys', { jwt: login.body.access_token });
    expect(keys.body.map((key: { label: string }) => key.label)).toEqual(['tests']);
    await first.context().close();
  });

  it('does not show a refused sign-in on the Create-account form the designer switched to', { timeout: 30_000 }, async () => {
    const page = await rig().chromium.newPage();
    // The sign-in's answer is held back until the designer has switched forms.
    let release!: () => void;
    const switched = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/auth/login', async (route) => {
      await switched;
      await route.continue();
    });
    await page.goto(rig().server.url + '/sign-in');
    await page.getByLabel('Email').fill(rig().account.email);
    await page.getByLabel('Password', { exact: true }).fill('not the password');
    const answered = page.waitForResponse('**/auth/login');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Create one' }).click();
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();
    release();
    expect((await answered).status()).toBe(401);
    // Give the page the moment it would take to show the answer.
    await page.waitForTimeout(500);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Create an account' }).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Create account' }).isEnabled()).toBe(true);
    await page.context().close();
  });

  it('says a webhook host that cannot be resolved cannot be resolved, and names a refused address once', { timeout: 30_000 }, async () => {
    const page = await rig().open('/settings');
    const section = page.getByRole('region', { name: 'Webhooks' });
    const form = section.getByRole('form', { name: 'Add a webhook endpoint' });
    await form.getByLabel('Endpoint URL').fill('https://no-such-host.invalid/hooks');
    await form.getByRole('button', { name: 'Add endpoint' }).click();
    const alert = section.getByRole('alert');
    await alert.waitFor(WAIT);
    expect(await alert.innerText()).toBe('no-such-host.invalid cannot be resolved: check the address for typos, or that its DNS record exists.');

    await form.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/hooks');
    await form.getByRole('button', { name: 'Add endpoint' }).click();
    await expect.poll(() => alert.innerText(), WAIT).toContain('127.0.0.1');
    const said = await alert.innerText();
    expect(said).toBe(
      "127.0.0.1 is an address of the server's own network (loopback). This server sends webhooks only to public internet addresses (started with --allow-private-webhooks, it also sends to loopback and private networks).",
    );
    expect(said.match(/own network/g)).toHaveLength(1);
    expect((await rig().server.request('GET', '/v1/webhooks', { apiKey: rig().account.apiKey })).body).toEqual([]);
    await page.close();
  });

  it('shows its not-found page, with the address and the ways on, for an address it has no screen for', { timeout: 30_000 }, async () => {
    const page = await rig().open('/flowz?x=1');
    await page.getByRole('heading', { name: 'Page not found', level: 1 }).waitFor(WAIT);
    expect(await page.locator('main').innerText()).toContain('Nothing is at /flowz?x=1.');
    expect(await page.title()).toBe('Page not found · Voxflow Studio');
    await page.getByRole('navigation', { name: 'Ways on' }).getByRole('link', { name: 'Your flows' }).click();
    await page.getByRole('heading', { name: 'Flows', level: 1 }).waitFor(WAIT);
    expect(new URL(page.url()).pathname).toBe('/');
    await page.close();
  });

  it('keeps a temperature of 5 in its number field saying the range, and writes nothing until it is in range', { timeout: 45_000 }, async () => {
    const { page, id } = await openFlow(rig(), 'Warm flow');
    const settings = page.getByRole('group', { name: 'Model, voice and listening' });
    const temperature = settings.getByRole('spinbutton', { name: 'Temperature' });
    await temperature.waitFor(WAIT);
    expect(await temperature.evaluate((input: any) => [input.type, input.min, input.max])).toEqual(['number', '0', '2']);

    await temperature.fill('5');
    await temperature.press('Tab');
    // Left with a value out of range, the field keeps it and says why, right under it.
    expect(await temperature.inputValue()).toBe('5');
    expect(await settings.getByRole('alert').innerText()).toBe('A number from 0 to 2.');
    expect(await temperature.getAttribute('aria-invalid')).toBe('true');
    await page.keyboard.press('Control+s');
    await expect.poll(() => page.getByText('Saved', { exact: true }).isVisible(), WAIT).toBe(true);
    expect(await storedYaml(rig(), id)).not.toMatch(/temperature/);

    await temperature.fill('0.7');
    await temperature.press('Enter');
    expect(await settings.getByRole('alert').count()).toBe(0);
    await page.keyboard.press('Control+s');
    await expect.poll(() => storedYaml(rig(), id), WAIT).toMatch(/temperature: 0\.7/);
    await page.close();
  });
});
