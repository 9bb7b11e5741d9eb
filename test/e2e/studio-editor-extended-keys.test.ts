import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { GUESSING_GAME_YAML, startTestServer } from '../support/server.ts';
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

  it('edits what a state does on entering from the inspector, and writes no key for a default', { timeout: 60_000 }, async () => {
    const { page, id } = await openFlow(rig, 'Booking edits', BOOKING);
    await node(page, 'offer_slot').locator('header').click();
    const entry = page.getByRole('group', { name: 'On entering' });
    await entry.waitFor(WAIT);
    const say = entry.getByRole('textbox', { name: 'Says first, word for word' });
    await say.fill('Here is what I found.');
    await say.blur();
    await entry.getByRole('checkbox', { name: 'End the call after it is said' }).check();
    await entry.getByRole('checkbox', { name: 'The caller cannot interrupt it' }).check();
    await entry.getByRole('checkbox', { name: 'The agent speaks first here' }).uncheck();
    await entry.getByRole('checkbox', { name: 'The model forgets the conversation so far' }).check();
    const pause = entry.getByRole('textbox', { name: "Pause that ends the caller's turn (ms)" });
    await pause.fill('800');
    await pause.press('Enter');
    await expect.poll(async () => (await node(page, 'offer_slot').locator('.pill').allInnerTexts()).map((t) => t.trim()), WAIT).toEqual(['says, no barge-in', 'ends call']);

    await page.keyboard.press('Control+s');
    await expect.poll(() => page.getByText('Saved', { exact: true }).isVisible(), WAIT).toBe(true);
    const draft = await rig.server.request('GET', `/v1/flows/${id}/draft`, { apiKey: rig.account.apiKey });
    const state = parseFlow(draft.body.yaml_content).document!.states.offer_slot!;
    expect(state).toMatchObject({
      on_enter: { say: 'Here is what I found.', end_session: true },
      interruptible: false,
      respond: false,
      context: 'reset',
      endpointing_ms: 800,
    });

    // Back to the defaults: the keys go, and on_enter with them.
    await say.fill('');
    await say.blur();
    await entry.getByRole('checkbox', { name: 'End the call after it is said' }).uncheck();
    await entry.getByRole('checkbox', { name: 'The caller cannot interrupt it' }).uncheck();
    await entry.getByRole('checkbox', { name: 'The agent speaks first here' }).check();
    await entry.getByRole('checkbox', { name: 'The model forgets the conversation so far' }).uncheck();
    await pause.fill('');
    await pause.press('Enter');
    await page.keyboard.press('Control+s');
    await expect.poll(async () => {
      const saved = await rig.server.request('GET', `/v1/flows/${id}/draft`, { apiKey: rig.account.apiKey });
      return Object.keys(parseFlow(saved.body.yaml_content).document!.states.offer_slot!).sort();
    }, WAIT).toEqual(['agent', 'tools', 'transitions', 'ui']);
    await page.close();
  });

  it('edits what the model is told of a parameter, and its allowed values', { timeout: 60_000 }, async () => {
    const { page, id } = await openFlow(rig, 'Parameter details', GUESSING_GAME_YAML);
    await node(page, 'setup').locator('header').click();
    const tool = page.locator('.inspector li.tool[data-tool="begin_game"]');
    await tool.locator('.head').click();
    const description = tool.getByRole('textbox', { name: 'What the model is told of secret_thing' });
    await description.waitFor(WAIT);
    await description.fill('The thing you picked, in two words at most.');
    await description.blur();
    const allowed = tool.getByRole('textbox', { name: 'Allowed values of secret_thing (comma-separated)' });
    await allowed.fill('a cat, a teapot');
    await allowed.press('Enter');
    await page.keyboard.press('Control+s');
    await expect.poll(async () => {
      const saved = await rig.server.request('GET', `/v1/flows/${id}/draft`, { apiKey: rig.account.apiKey });
      return parseFlow(saved.body.yaml_content).document?.states.setup?.tools?.begin_game?.parameters?.secret_thing;
    }, WAIT).toEqual({ type: 'string', required: true, description: 'The thing you picked, in two words at most.', enum: ['a cat', 'a teapot'] });
    await page.close();
  });
});
