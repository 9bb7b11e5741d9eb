import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { screenshot } from './browser.ts';
import { GUESSING_GAME_YAML } from '../support/server.ts';
import { studioSuite } from './studio-screens-server.ts';

// Signing up and in through the studio's form, as a person in a browser does (the desktop app
// signs in without it: studio-flows-desktop-menu.test.ts).
describe('signing in to the studio', () => {
  const rig = studioSuite();

  async function signedOutPage(path = '/'): Promise<Page> {
    const page = await rig().chromium.newPage();
    await page.goto(rig().server.url + path);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    return page;
  }
  const password = (page: Page) => page.getByLabel('Password', { exact: true });

  it('creates an account through the form and lands on the empty flows screen', { timeout: 30_000 }, async () => {
    const page = await signedOutPage('/');
    expect(await page.title()).toBe('Sign in · Voxflow Studio');
    await screenshot(page, 'studio-sign-in');
    await page.getByRole('button', { name: 'Create one' }).click();
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();

    const email = `designer-${Date.now()}@example.com`;
    await page.getByLabel('Email').fill(email);
    await password(page).fill('a long enough password');
    await page.getByRole('button', { name: 'Create account' }).click();

    await page.getByRole('heading', { name: 'Design your first voice flow' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/');
    expect(await page.getByRole('navigation', { name: 'Studio' }).innerText()).toContain(email);
    // The new account is real: it can sign in over the API with the same password.
    const login = await rig().server.request('POST', '/auth/login', { body: { email, password: 'a long enough password' } });
    expect(login.status).toBe(200);
    await page.close();
  });

  it('offers to sign in instead when the email has an account already', { timeout: 30_000 }, async () => {
    const page = await signedOutPage('/');
    await page.getByRole('button', { name: 'Create one' }).click();
    await page.getByLabel('Email').fill(rig().account.email);
    await password(page).fill('another long password');
    await page.getByRole('button', { name: 'Create account' }).click();
    const alert = page.getByRole('alert');
    await alert.filter({ hasText: 'An account with this email exists already.' }).waitFor();
    await alert.getByRole('button', { name: 'Sign in instead' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe(rig().account.email);
    await page.close();
  });

  it('says a wrong password is wrong, keeps the email, and clears the password for another try', { timeout: 30_000 }, async () => {
    const page = await signedOutPage('/sign-in');
    await page.getByLabel('Email').fill(rig().account.email);
    await password(page).fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The email or password is wrong.' }).waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe(rig().account.email);
    expect(await password(page).inputValue()).toBe('');
    expect(await page.evaluate('document.activeElement?.id')).toBe('sign-in-password');
    expect(await page.evaluate("sessionStorage.getItem('voxflow.access_token')")).toBeNull();

    await password(page).fill(rig().account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Flows', level: 1 }).waitFor();
    // From /sign-in, signing in lands on the flows at /.
    await page.waitForURL(rig().server.url + '/');
    expect(await page.title()).toBe('Flows · Voxflow Studio');
    await page.close();
  });

  it('keeps a deep link: signing in on /settings shows the settings', { timeout: 30_000 }, async () => {
    const page = await signedOutPage('/settings');
    await page.getByLabel('Email').fill(rig().account.email);
    await password(page).fill(rig().account.password);
    await password(page).press('Enter');
    await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/settings');
    await page.close();
  });

  it('signs out back to the form, and a reload stays signed out', { timeout: 30_000 }, async () => {
    const page = await rig().open('/sessions');
    await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate("sessionStorage.getItem('voxflow.access_token')")).toBeNull();
    await page.close();
  });

  // A studio link opened in a new tab, or a reload, stays signed in (the
  // refresh cookie, HttpOnly), no token is kept where page scripts can read it, and "Editor"
  // reopens the flow last opened.
  it('stays signed in in a new tab and after a reload, and "Editor" reopens the last flow', { timeout: 45_000 }, async () => {
    const created = await rig().server.request('POST', '/v1/flows', { apiKey: rig().account.apiKey, body: { name: 'Tabs and reloads', yaml_content: GUESSING_GAME_YAML } });
    const page = await signedOutPage('/sign-in');
    await page.getByLabel('Email').fill(rig().account.email);
    await password(page).fill(rig().account.password);
    await password(page).press('Enter');
    await page.getByRole('heading', { name: 'Flows', level: 1 }).waitFor();
    await page.goto(`${rig().server.url}/flow-editor?flow=${created.body.id}`);
    await expect.poll(() => page.getByLabel('Flow name').inputValue(), { timeout: 15_000 }).toBe('Tabs and reloads');

    // A new tab of the same browser, on a deep link: no sign-in form.
    const tab = await page.context().newPage();
    await tab.goto(rig().server.url + '/settings');
    await tab.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
    expect(await tab.getByRole('heading', { name: 'Sign in' }).count()).toBe(0);
    // "Editor" in the new tab opens the flow last opened.
    await tab.getByRole('link', { name: 'Editor' }).click();
    await tab.waitForURL(`${rig().server.url}/flow-editor?flow=${created.body.id}`);
    await expect.poll(() => tab.getByLabel('Flow name').inputValue(), { timeout: 15_000 }).toBe('Tabs and reloads');
    // A reload keeps the sign-in too, and no storage a script can read holds a token.
    await tab.reload();
    await expect.poll(() => tab.getByLabel('Flow name').inputValue(), { timeout: 15_000 }).toBe('Tabs and reloads');
    const stored = await tab.evaluate<string>('JSON.stringify({ ...sessionStorage, ...localStorage })');
    expect(stored).not.toMatch(/eyJ/);
    expect(await tab.evaluate<string>('document.cookie')).toBe('');
    await tab.close();
    await page.close();
  });

  it('keeps the sign-in page inside 1280 px', { timeout: 30_000 }, async () => {
    const page = await signedOutPage('/');
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1280);
    await page.close();
  });
});
