// The sessions screen's search box and filters: what was said, the flow, the status, the caller's
// number and the days narrow the list on the server, the address keeps them (a reload shows the
// same list, the controls filled in), and Clear filters brings the whole list back.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createFlow } from '../support/server.ts';
import { studioSuite } from './studio-screens-server.ts';

const WAIT = { timeout: 20_000 };
const rig = studioSuite();

/** A session as the transports leave one (the voice and carrier paths are other files' subject). */
async function storedSession(options: { flowId: string; said: string; from?: string; end?: string }): Promise<string> {
  const { store } = rig().server.app.services;
  const accountId = (await store.accounts.findByEmail(rig().account.email))!.id;
  const phone = options.from ? { direction: 'inbound' as const, from: options.from, to: '+15550001111', carrierCallId: `call-${Math.random()}`, callStatus: 'completed' as const } : undefined;
  const session = await store.sessions.createConnected({
    accountId,
    flowId: options.flowId,
    transport: phone ? 'twilio' : 'webrtc',
    mode: 'flow',
    context: {},
    metadata: {},
    ...(phone && { phone }),
  });
  await store.sessions.setFlowVersion(session.id, 1, false);
  const at = Date.now() / 1000;
  const data = JSON.stringify({ type: 'transcript', role: 'user', text: options.said, final: true });
  await store.timelines.append(session.id, [{ seq: 1, at, type: 'transcript', data }], { events: 1, bytes: data.length, dropped: 0 });
  await store.sessions.end(session.id, { endedAt: at + 20, reason: options.end ?? 'client_ended', creditsChargedCents: 1, durationSecs: 20 });
  return session.id;
}

/** The sessions the table lists, by id, top to bottom. */
const listedIds = (page: Page) =>
  page
    .getByRole('table', { name: 'Sessions' })
    .locator('tbody a.when')
    .evaluateAll((links) => links.map((a) => new URL((a as any).href).searchParams.get('id')));

describe('searching and filtering the sessions list', () => {
  it('narrows the list by what was said, flow, status and caller number, keeps it in the address, and clears', async () => {
    const booking = await createFlow(rig().server, rig().account.apiKey, 'Booking line');
    const game = await createFlow(rig().server, rig().account.apiKey, 'Guessing game');
    const monday = await storedSession({ flowId: booking, said: 'Monday morning, please' });
    const call = await storedSession({ flowId: booking, said: 'I need to cancel Tuesday', from: '+442071234567', end: 'caller_hung_up' });
    const played = await storedSession({ flowId: game, said: 'Is it an animal? Monday.' });

    const page = await rig().open('/sessions');
    await expect.poll(() => listedIds(page), WAIT).toEqual([played, call, monday]);

    // What was said, typed in the search box: the server searches the transcripts.
    const search = page.getByRole('searchbox', { name: 'Search what was said' });
    await search.fill('monday');
    await expect.poll(() => listedIds(page), WAIT).toEqual([played, monday]);
    await expect.poll(() => new URL(page.url()).search, WAIT).toBe('?q=monday');

    // And a flow: both apply.
    await page.getByRole('combobox', { name: 'Flow' }).selectOption({ label: 'Booking line' });
    await expect.poll(() => listedIds(page), WAIT).toEqual([monday]);

    // Reloaded, the address brings the same list back, the controls filled in.
    await page.reload();
    await expect.poll(() => listedIds(page), WAIT).toEqual([monday]);
    expect(await search.inputValue()).toBe('monday');
    expect(await page.getByRole('combobox', { name: 'Flow' }).inputValue()).toBe(booking);

    // Nothing matches: said so, with the way back.
    await search.fill('wednesday');
    await page.getByRole('heading', { name: 'No sessions match' }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Clear filters' }).first().click();
    await expect.poll(() => listedIds(page), WAIT).toEqual([played, call, monday]);
    expect(new URL(page.url()).search).toBe('');
    expect(await search.inputValue()).toBe('');

    // The caller's number, part of it, and the end reason.
    await page.getByRole('textbox', { name: 'Caller number' }).fill('+44207');
    await expect.poll(() => listedIds(page), WAIT).toEqual([call]);
    await page.getByRole('textbox', { name: 'Caller number' }).fill('');
    await page.getByRole('combobox', { name: 'Ended because' }).selectOption('caller_hung_up');
    await expect.poll(() => listedIds(page), WAIT).toEqual([call]);
    await page.getByRole('combobox', { name: 'Ended because' }).selectOption('');

    // Status and days: today's ended sessions are all three; none were live, none tomorrow.
    await page.getByRole('combobox', { name: 'Status' }).selectOption('connected');
    await page.getByRole('heading', { name: 'No sessions match' }).waitFor(WAIT);
    await page.getByRole('combobox', { name: 'Status' }).selectOption('ended');
    await expect.poll(() => listedIds(page), WAIT).toEqual([played, call, monday]);
    const day = (offset: number) => {
      const d = new Date(Date.now() + offset * 86_400_000);
      return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
    };
    await page.getByLabel('From', { exact: true }).fill(day(0));
    await page.getByLabel('To', { exact: true }).fill(day(0));
    await expect.poll(() => new URL(page.url()).searchParams.get('to'), WAIT).toBe(day(0));
    await expect.poll(() => listedIds(page), WAIT).toEqual([played, call, monday]);
    await page.getByLabel('From', { exact: true }).fill(day(1));
    await page.getByLabel('To', { exact: true }).fill(day(1));
    await page.getByRole('heading', { name: 'No sessions match' }).waitFor(WAIT);

    // A version that cannot be asked is said at once, and nothing is asked.
    await page.getByRole('textbox', { name: 'Version' }).fill('latest');
    await page.getByRole('alert').filter({ hasText: 'A version number, or "draft".' }).waitFor(WAIT);
    expect(new URL(page.url()).searchParams.get('version')).toBeNull();
    expect(rig().chromium.pageErrors).toEqual([]);
    await page.close();
  }, 90_000);
});
