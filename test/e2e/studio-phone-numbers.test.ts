// The Phone numbers screen, as a designer uses it: bind a number they hold at a carrier to a
// published flow (a badly typed number is refused inline before anything is sent), copy the two
// URLs the carrier's console needs, told where each goes for that carrier; see the server refuse a
// number already bound, in words; delete a number after a confirmation; and keep the
// do-not-call list.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createFlow } from '../support/server.ts';
import { studioSuite } from './studio-screens-server.ts';
import { screenOnOnePage } from './studio.ts';

describe('the Phone numbers screen', () => {
  // A number is bound once per server, whoever holds it: a server of its own, so no other file's numbers meet these.
  const rig = studioSuite({ ownServer: true });
  const numbersNow = async () => (await rig().server.request('GET', '/v1/phone-numbers', { jwt: rig().account.jwt })).body as Array<Record<string, any>>;

  // Each test comes to the screen from the sidebar afresh, on one page for the file (screenOnOnePage).
  const numbersPage = screenOnOnePage(rig, { path: '/phone-numbers', link: 'Phone numbers' });

  async function openScreen(): Promise<Page> {
    const page = await numbersPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: rig().server.url });
    await page.getByRole('heading', { name: 'Phone numbers', level: 1 }).waitFor();
    return page;
  }

  it('binds a number to a published flow and shows the URLs to paste at the carrier, each with its place and a copy button', { timeout: 60_000 }, async () => {
    await createFlow(rig().server, rig().account.apiKey, 'Front desk menu');
    const page = await openScreen();
    await page.getByText('No numbers yet.').waitFor();

    await page.getByRole('button', { name: 'Add number' }).click();
    const form = page.getByRole('form', { name: 'Add a phone number' });
    const flowSelect = form.getByLabel('Answered by');
    await expect.poll(() => flowSelect.locator('option').allInnerTexts(), { timeout: 10_000 }).toEqual(['Front desk menu']);

    // A number without its country code is refused before anything is sent.
    const number = form.getByLabel('Number');
    await number.fill('555 010 0002');
    await form.getByRole('button', { name: 'Add', exact: true }).click();
    await expect.poll(() => form.locator('#number-error').innerText()).toBe('Start with + and the country code, e.g. +15551234567.');
    expect(await number.getAttribute('aria-invalid')).toBe('true');
    expect(await numbersNow()).toEqual([]);

    // Spaces are the designer's, the number is E.164's.
    await number.fill('+1 555 010 0002');
    expect(await number.getAttribute('aria-invalid')).toBeNull();
    await form.getByLabel('Label').fill('Front desk');
    await form.getByRole('button', { name: 'Add', exact: true }).click();

    const setup = page.getByRole('region', { name: 'Connect +15550100002 at Twilio' });
    await setup.waitFor();
    const [bound] = await numbersNow();
    expect(bound).toMatchObject({ carrier: 'twilio', number: '+15550100002', label: 'Front desk' });
    expect(bound!.webhook_url).toBe(`${rig().server.url}/telephony/twilio/voice`);
    expect(await setup.getByTestId('webhook-url').innerText()).toBe(bound!.webhook_url);
    expect(await setup.getByTestId('status-url').innerText()).toBe(bound!.status_url);
    const text = await setup.innerText();
    expect(text).toContain('“A call comes in”');
    expect(text).toContain('“Call status changes”');
    await setup.getByRole('button', { name: 'Copy the webhook URL' }).click();
    await expect.poll(() => page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(bound!.webhook_url);
    await setup.getByRole('button', { name: 'Copy the status URL' }).click();
    await expect.poll(() => page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(bound!.status_url);
    await setup.getByRole('button', { name: 'Done' }).click();

    const row = page.getByRole('table', { name: 'Phone numbers' }).getByRole('row').nth(1);
    expect((await row.innerText()).replace(/\s+/g, ' ').trim()).toBe('Twilio +15550100002 Front desk Front desk menu No calls yet Setup Delete');
    expect(unexpectedErrors()).toEqual([]);
  });

  it("tells each carrier's console apart: Telnyx's TeXML application, Plivo's application", { timeout: 60_000 }, async () => {
    const page = await openScreen();
    for (const [carrier, number, webhook, status] of [
      ['Telnyx', '+15550100003', '“Webhook URL”', '“Status Callback”'],
      ['Plivo', '+15550100004', '“Answer URL”', '“Hangup URL”'],
    ] as const) {
      await page.getByRole('button', { name: 'Add number' }).click();
      const form = page.getByRole('form', { name: 'Add a phone number' });
      await form.getByLabel('Carrier').selectOption({ label: carrier });
      await form.getByLabel('Number').fill(number);
      // Until the flows are in, the one option is "Loading flows…" and Add waits with it.
      await expect.poll(() => form.getByLabel('Answered by').locator('option').allInnerTexts(), { timeout: 10_000 }).toEqual(['Front desk menu']);
      await form.getByRole('button', { name: 'Add', exact: true }).click();
      const setup = page.getByRole('region', { name: `Connect ${number} at ${carrier}` });
      await setup.waitFor();
      const text = await setup.innerText();
      expect(text).toContain(webhook);
      expect(text).toContain(status);
      expect(await setup.getByTestId('webhook-url').innerText()).toBe(`${rig().server.url}/telephony/${carrier.toLowerCase()}/voice`);
    }
    // "Setup" shows a number's URLs again later.
    await page.getByRole('button', { name: 'Show how to connect +15550100002' }).click();
    await page.getByRole('region', { name: 'Connect +15550100002 at Twilio' }).waitFor();
  });

  it("shows the server's refusal of a number already bound, in words, and keeps the form", { timeout: 60_000 }, async () => {
    const page = await openScreen();
    await page.getByRole('button', { name: 'Add number' }).click();
    const form = page.getByRole('form', { name: 'Add a phone number' });
    // The same number at another carrier: a real number rings at one carrier at a time.
    await form.getByLabel('Carrier').selectOption({ label: 'Telnyx' });
    await form.getByLabel('Number').fill('+15550100002');
    // Until the flows are in, the one option is "Loading flows…" and Add waits with it.
    await expect.poll(() => form.getByLabel('Answered by').locator('option').allInnerTexts(), { timeout: 10_000 }).toEqual(['Front desk menu']);
    await form.getByRole('button', { name: 'Add', exact: true }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toBe('+15550100002 is already bound on this server; release it there first.');
    expect(await form.getByLabel('Number').inputValue()).toBe('+15550100002');
    expect((await numbersNow()).filter((n) => n.number === '+15550100002').map((n) => n.carrier)).toEqual(['twilio']);
    await form.getByRole('button', { name: 'Cancel' }).click();
  });

  it('deletes a number only once the designer confirms', { timeout: 60_000 }, async () => {
    const page = await openScreen();
    const table = page.getByRole('table', { name: 'Phone numbers' });
    await table.waitFor();
    await page.getByRole('button', { name: 'Delete +15550100003' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete +15550100003?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await numbersNow()).some((n) => n.number === '+15550100003')).toBe(true);

    await page.getByRole('button', { name: 'Delete +15550100003' }).click();
    await page.getByRole('dialog', { name: 'Delete +15550100003?' }).getByRole('button', { name: 'Delete number' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Deleted' }).innerText()).toBe('Deleted +15550100003.');
    expect(await table.getByText('+15550100003').count()).toBe(0);
    expect((await numbersNow()).map((n) => n.number).sort()).toEqual(['+15550100002', '+15550100004']);
  });

  it('keeps the do-not-call list: a bad number refused inline, one added, listed, and removed after a confirmation', { timeout: 60_000 }, async () => {
    const page = await openScreen();
    const section = page.getByRole('region', { name: 'Do not call' });
    await section.getByText('The list is empty.').waitFor();
    const field = section.getByLabel('Number');
    await field.fill('+0123');
    await section.getByRole('button', { name: 'Add to the list' }).click();
    await expect.poll(() => section.locator('#dnc-number-error').innerText()).toBe('A country code never starts with 0: e.g. +15551234567.');
    expect(await field.getAttribute('aria-invalid')).toBe('true');

    await field.fill('+1 (555) 765-4321');
    await section.getByRole('button', { name: 'Add to the list' }).click();
    const list = section.getByRole('table', { name: 'Do-not-call list' });
    await list.waitFor();
    expect(await list.getByRole('row').nth(1).getByRole('cell').first().innerText()).toBe('+15557654321');
    const stored = async () => (await rig().server.request('GET', '/v1/do-not-call', { jwt: rig().account.jwt })).body.map((e: { number: string }) => e.number);
    expect(await stored()).toEqual(['+15557654321']);

    // Still there after a reload: it is the server's list, not the page's.
    await page.reload();
    await page.getByRole('region', { name: 'Do not call' }).getByRole('table', { name: 'Do-not-call list' }).waitFor();
    await page.getByRole('button', { name: 'Remove +15557654321 from the do-not-call list' }).click();
    await page.getByRole('dialog', { name: 'Remove +15557654321 from the do-not-call list?' }).getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('region', { name: 'Do not call' }).getByText('The list is empty.').waitFor();
    expect(await stored()).toEqual([]);
    expect(unexpectedErrors()).toEqual([]);
  });

  // The browser logs every refused request; the one this file provokes (409, a number already bound) is expected.
  const unexpectedErrors = () => rig().chromium.pageErrors.filter((error) => !error.includes('status of 409 (Conflict)'));
});
