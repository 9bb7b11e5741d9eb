import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../support/server.ts';
import { node, openFlow, WAIT } from './studio-editor-page.ts';
import { startStudioRig, type StudioRig } from './studio.ts';

// The flow editor's canvas for the appointment-booking example (DESIGN §12), as a designer sees
// it: the states that speak on entering, end the call or cannot be interrupted are marked, the
// global tool's target says so, and the http tool's answers show as dashed branches of their own.
const BOOKING = readFileSync(new URL('../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8');

describe('the flow editor with the extended keys', () => {
  let rig: StudioRig;
  beforeAll(async () => {
    rig = await startStudioRig({ server: await startTestServer() });
  });
  afterAll(async () => {
    const server = rig?.server;
    await rig?.close();
    await server?.close();
  });

  it('marks on-entry speech, call ends, no barge-in and the global target, and draws the result branches', { timeout: 60_000 }, async () => {
    const { page } = await openFlow(rig, 'Booking', BOOKING);
    const pills = async (state: string) => (await node(page, state).locator('.pill').allInnerTexts()).map((t) => t.trim());
    await expect.poll(() => pills('welcome'), WAIT).toEqual(['Start', 'says, no barge-in']);
    expect(await pills('booked')).toEqual(['says', 'ends call']);
    expect(await pills('human_handoff')).toEqual(['says', 'ends call', 'global']);
    expect(await pills('offer_slot')).toEqual([]);
    expect(await node(page, 'human_handoff').locator('.pill.global').getAttribute('title')).toContain('talk_to_human');

    // welcome's check may lead to offer_slot or ask_day by its answer; ask_day's to offer_slot.
    const branches = page.locator('.svelte-flow__edge-label .tool[data-branch="result"]');
    await expect.poll(() => branches.count(), WAIT).toBe(3);
    const titles = await branches.evaluateAll((els) => els.map((el) => el.getAttribute('title')).sort());
    expect(titles).toEqual([
      'check_availability: its answer may lead from ask_day to offer_slot',
      'check_availability: its answer may lead from welcome to ask_day',
      'check_availability: its answer may lead from welcome to offer_slot',
    ]);
    expect(await page.locator('.svelte-flow__edge-path.transition.branch').count()).toBe(3);
    await page.close();
  });
});
