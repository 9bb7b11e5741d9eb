import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { GUESSING_GAME_YAML, startTestServer } from '../support/server.ts';
import { editorOnOnePage, node, showCards, storedYaml, WAIT } from './studio-editor-page.ts';
import { startStudioRig, type StudioRig } from './studio.ts';

// The flow editor's canvas for the appointment-booking example (docs/flows.md#extended-flow-keys),
// as a designer sees it: the states that speak on entering, end the call or cannot be interrupted
// are marked, the global tool's target says so, and the http tool's answers show as dashed branches
// of their own.
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
  // Each test opens a flow of its own, on one page for the file (editorOnOnePage).
  const openFlow = editorOnOnePage(() => rig);

  it('marks on-entry speech, call ends, no barge-in and the global target, and draws the result branches', { timeout: 60_000 }, async () => {
    const { page } = await openFlow('Booking', BOOKING);
    await showCards(page);
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
  });

  it('edits what a state does on entering from the inspector, and writes no key for a default', { timeout: 60_000 }, async () => {
    const { page, id } = await openFlow('Booking edits', BOOKING);
    await showCards(page);
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
    const sets = entry.getByRole('group', { name: 'Variables it sets first' });
    await sets.getByRole('button', { name: '+ Set a variable' }).click();
    const variable = sets.getByRole('textbox', { name: 'Variable', exact: true });
    await variable.fill('offers');
    await variable.press('Enter');
    const value = sets.getByRole('textbox', { name: 'Value of offers' });
    await value.fill('1');
    await value.press('Enter');
    await expect.poll(async () => (await node(page, 'offer_slot').locator('.pill').allInnerTexts()).map((t) => t.trim()), WAIT).toEqual(['says, no barge-in', 'ends call']);

    await page.keyboard.press('Control+s');
    await expect.poll(() => page.getByText('Saved', { exact: true }).isVisible(), WAIT).toBe(true);
    const draft = await rig.server.request('GET', `/v1/flows/${id}/draft`, { apiKey: rig.account.apiKey });
    const state = parseFlow(draft.body.yaml_content).document!.states.offer_slot!;
    expect(state).toMatchObject({
      on_enter: { set: { offers: 1 }, say: 'Here is what I found.', end_session: true },
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
    await sets.getByRole('button', { name: 'Stop setting offers' }).click();
    await pause.fill('');
    await pause.press('Enter');
    await page.keyboard.press('Control+s');
    await expect.poll(async () => {
      const saved = await rig.server.request('GET', `/v1/flows/${id}/draft`, { apiKey: rig.account.apiKey });
      return Object.keys(parseFlow(saved.body.yaml_content).document!.states.offer_slot!).sort();
    }, WAIT).toEqual(['agent', 'tools', 'transitions', 'ui']);
  });

  it('edits what the model is told of a parameter, and its allowed values', { timeout: 60_000 }, async () => {
    const { page, id } = await openFlow('Parameter details', GUESSING_GAME_YAML);
    await showCards(page);
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
  });

  it('edits the flow\'s settings and global tools in the flow panel, keeping the file\'s comments', { timeout: 90_000 }, async () => {
    const { page, id } = await openFlow('Booking settings', BOOKING);
    await showCards(page);
    const settings = page.getByRole('group', { name: 'Model, voice and listening' });
    await settings.waitFor(WAIT);
    // Text fields and number fields (spinbuttons) alike.
    const field = (name: string) => settings.getByLabel(name, { exact: true });
    await field('Model').fill('gpt-4o-mini');
    await field('Voice provider').fill('deepgram');
    await field('Language').fill('de-DE');
    await field('Language').blur();
    // This test server has no Deepgram key: the panel says so, in /capabilities terms.
    const lacks = settings.getByRole('status', { name: 'What this server lacks for the flow' });
    await expect.poll(() => lacks.innerText(), WAIT).toContain('The flow asks for a deepgram voice, but this server');
    await field('Temperature').fill('0.7');
    await field('Temperature').press('Enter');
    await settings.getByRole('checkbox', { name: 'Record every call' }).check();
    await field('End the call after this many prompts').fill('3');
    await field('End the call after this many prompts').press('Enter');

    const globals = page.getByRole('group', { name: 'Global tools' });
    await globals.getByRole('combobox', { name: 'When talk_to_human is called' }).selectOption({ label: 'Stay in the current state' });
    await globals.getByRole('combobox', { name: 'Tool to offer in every state' }).selectOption('check_availability');
    await globals.getByRole('button', { name: '+ Global tool' }).click();
    await globals.getByRole('combobox', { name: 'When check_availability is called' }).selectOption({ label: 'Go to offer_slot' });

    await page.keyboard.press('Control+s');
    await expect.poll(async () => parseFlow(await storedYaml(rig, id)).document?.settings?.global_tools, WAIT).toEqual({
      talk_to_human: {},
      check_availability: { target: 'offer_slot' },
    });
    const text = await storedYaml(rig, id);
    expect(parseFlow(text).document!.settings).toMatchObject({
      llm: { temperature: 0.7, model: 'gpt-4o-mini' },
      voice: { provider: 'deepgram' },
      language: 'de-DE',
      recording: true,
      idle: { after_secs: 12, reprompt: 'Are you still there? Which day would suit you?', max_reprompts: 3 },
    });
    expect(text).toContain('# Appointment booking for a dental practice');

    // Emptying a field takes its key away; stopping a global tool takes its entry away.
    await field('Voice provider').fill('');
    await field('Voice provider').blur();
    await globals.getByRole('button', { name: 'Stop offering check_availability in every state' }).click();
    // The other lines (this server may have no model or speech-to-text for the rest) stay.
    await expect.poll(() => settings.getByText('asks for a deepgram voice').count(), WAIT).toBe(0);
    await page.keyboard.press('Control+s');
    await expect.poll(async () => {
      const saved = parseFlow(await storedYaml(rig, id)).document?.settings;
      return [saved?.voice, Object.keys(saved?.global_tools ?? {})];
    }, WAIT).toEqual([undefined, ['talk_to_human']]);
  });

  it('edits an http tool\'s method, time limit, a header naming an account secret and its result branches', { timeout: 90_000 }, async () => {
    await rig.server.request('PUT', '/v1/secrets/clinic_id', { jwt: rig.account.jwt, body: { value: 'maple-street-7' } });
    const { page, id } = await openFlow('Booking http', BOOKING);
    await showCards(page);
    await node(page, 'welcome').locator('header').click();
    const tool = page.locator('.inspector li.tool[data-tool="check_availability"]');
    await tool.locator('.head').click();
    await expect.poll(() => tool.getByText('Defined in the flow\'s shared tools').isVisible(), WAIT).toBe(true);
    await expect.poll(() => tool.getByRole('textbox', { name: 'URL', exact: true }).inputValue(), WAIT).toBe('https://clinic.example.com/voxflow/availability');

    await tool.getByRole('combobox', { name: 'Method' }).selectOption('PUT');
    const limit = tool.getByRole('textbox', { name: 'Time limit (ms)' });
    await limit.fill('8000');
    await limit.press('Enter');
    await tool.getByRole('button', { name: '+ Header' }).click();
    const secret = tool.getByRole('combobox', { name: 'Secret for X-Header-1' });
    await expect.poll(() => secret.locator('option').allTextContents(), WAIT).toEqual(['Use a secret…', 'clinic_id']);
    await secret.selectOption('clinic_id');
    await tool.getByRole('group', { name: 'States its answer may choose' }).getByRole('checkbox', { name: 'ask_day' }).uncheck();

    // A state's own tool becomes an http tool from its URL.
    await node(page, 'offer_slot').locator('header').click();
    const confirm = page.locator('.inspector li.tool[data-tool="confirm_booking"]');
    await confirm.locator('.head').click();
    const url = confirm.getByRole('textbox', { name: 'Calls your service at (http tool)' });
    await url.fill('https://clinic.example.com/voxflow/book');
    await url.press('Enter');

    await page.keyboard.press('Control+s');
    // Waits on the last edit as well: on a busy machine the draft may also have been autosaved
    // in a pause between the edits, with the shared tool's changes but not yet the URL.
    await expect.poll(async () => {
      const saved = parseFlow(await storedYaml(rig, id)).document;
      return [saved?.tools?.check_availability?.http, saved?.states.offer_slot?.tools?.confirm_booking];
    }, WAIT).toEqual([{
      url: 'https://clinic.example.com/voxflow/availability',
      timeout_ms: 8000,
      headers: { Authorization: 'Bearer {secret.clinic_api_token}', 'X-Header-1': '{secret.clinic_id}' },
      store: { slot: 'slot' },
      method: 'PUT',
    }, { description: 'The caller accepts the offered slot.', http: { url: 'https://clinic.example.com/voxflow/book' } }]);
    const text = await storedYaml(rig, id);
    const flow = parseFlow(text).document!;
    expect(flow.states.welcome!.transitions!.on_tool_result).toEqual({ check_availability: ['offer_slot'] });
    expect(flow.states.ask_day!.transitions!.on_tool_result).toEqual({ check_availability: ['offer_slot', 'ask_day'] });
    expect(text).not.toContain('maple-street-7');
  });

  it('edits, from the keyboard, which fields of an http tool\'s answer it keeps as variables, keeping the file\'s comments', { timeout: 90_000 }, async () => {
    const { page, id } = await openFlow('Booking store', BOOKING);
    await showCards(page);
    await node(page, 'welcome').locator('header').click();
    const tool = page.locator('.inspector li.tool[data-tool="check_availability"]');
    await tool.locator('.head').click();
    const kept = tool.getByRole('group', { name: 'Variables kept from its answer' });
    // The example keeps the answer's slot in {slot}.
    const slotField = kept.getByRole('textbox', { name: 'Answer field kept in slot' });
    await expect.poll(() => slotField.inputValue(), WAIT).toBe('slot');
    await slotField.fill('slot.start');
    await slotField.press('Enter');

    // A new row, by keyboard: its button, then its variable and field, each committed by Enter.
    await kept.getByRole('button', { name: '+ Keep a field' }).focus();
    await page.keyboard.press('Enter');
    const variable = kept.getByRole('textbox', { name: 'Variable', exact: true }).nth(1);
    await expect.poll(() => variable.inputValue(), WAIT).toBe('result');
    await variable.focus();
    await page.keyboard.press('Control+a');
    await page.keyboard.type('dentist');
    await page.keyboard.press('Enter');
    const dentistField = kept.getByRole('textbox', { name: 'Answer field kept in dentist' });
    await dentistField.focus();
    await page.keyboard.press('Control+a');
    // A path with a space is no field of a JSON answer: said, and not written.
    await page.keyboard.type('slot dentist');
    await expect.poll(() => kept.getByRole('alert').innerText(), WAIT).toContain('a dotted path such as slot.start');
    await page.keyboard.press('Control+a');
    await page.keyboard.type('slot.dentist.name');
    await page.keyboard.press('Enter');

    await page.keyboard.press('Control+s');
    await expect.poll(async () => parseFlow(await storedYaml(rig, id)).document?.tools?.check_availability?.http?.store, WAIT).toEqual({
      slot: 'slot.start',
      dentist: 'slot.dentist.name',
    });
    const text = await storedYaml(rig, id);
    expect(text).toContain('# Appointment booking for a dental practice');
    expect(text).toContain('# Before using it, set the account\'s secrets');
    expect(parseFlow(text).diagnostics.filter((d) => d.severity === 'error')).toEqual([]);

    // Removing both rows takes `store` away; the rest of the action stays.
    await kept.getByRole('button', { name: 'Stop keeping dentist' }).focus();
    await page.keyboard.press('Enter');
    await kept.getByRole('button', { name: 'Stop keeping slot' }).click();
    await page.keyboard.press('Control+s');
    await expect.poll(async () => parseFlow(await storedYaml(rig, id)).document?.tools?.check_availability?.http, WAIT).toEqual({
      url: 'https://clinic.example.com/voxflow/availability',
      timeout_ms: 3000,
      headers: { Authorization: 'Bearer {secret.clinic_api_token}' },
    });
  });

  it('edits the flow\'s voice, speech recognition model and idle reprompt in the flow panel, and takes idle away with its wait', { timeout: 90_000 }, async () => {
    const { page, id } = await openFlow('Game settings', GUESSING_GAME_YAML);
    await showCards(page);
    const settings = page.getByRole('group', { name: 'Model, voice and listening' });
    await settings.waitFor(WAIT);
    // Text fields and number fields (spinbuttons) alike.
    const field = (name: string) => settings.getByLabel(name, { exact: true });
    await field('Voice').fill('nova');
    await field('Speech recognition model').fill('nova-2-phonecall');
    await field('Speech recognition model').blur();
    // The reprompt is offered once there is a wait to reprompt after.
    expect(await field('Say').count()).toBe(0);
    await field('When the caller is silent for (seconds)').fill('8');
    await field('When the caller is silent for (seconds)').press('Enter');
    await field('Say').fill('Still thinking of your thing?');
    await field('Say').blur();
    await page.keyboard.press('Control+s');
    await expect.poll(async () => parseFlow(await storedYaml(rig, id)).document?.settings, WAIT).toMatchObject({
      voice: { voice: 'nova' },
      stt: { model: 'nova-2-phonecall' },
      idle: { after_secs: 8, reprompt: 'Still thinking of your thing?' },
    });

    // Emptying the wait takes the whole idle block away: a reprompt means nothing without it.
    await field('When the caller is silent for (seconds)').fill('');
    await field('When the caller is silent for (seconds)').press('Enter');
    await expect.poll(() => field('Say').count(), WAIT).toBe(0);
    await page.keyboard.press('Control+s');
    await expect.poll(async () => parseFlow(await storedYaml(rig, id)).document?.settings?.idle, WAIT).toBeUndefined();
    expect(parseFlow(await storedYaml(rig, id)).document?.settings).toMatchObject({ voice: { voice: 'nova' }, stt: { model: 'nova-2-phonecall' } });
  });
});
