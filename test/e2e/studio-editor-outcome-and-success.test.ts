// The flow panel's "Outcome & success" section (docs/flows.md#outcome-and-success), as a designer
// uses it: a field and criteria added on screen become settings.outcome and settings.success in the
// saved draft, which the validator accepts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { createFlow, startTestServer } from '../support/server.ts';
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { openFlow, WAIT } from './studio-editor-page.ts';
import { startStudioRig, type StudioRig } from './studio.ts';

describe('the flow panel’s outcome and success', () => {
  let rig: StudioRig;
  beforeAll(async () => {
    rig = await startStudioRig({ server: await startTestServer() });
  });
  afterAll(async () => {
    const server = rig?.server;
    await rig?.close();
    await server?.close();
  });

  it('adds an outcome field and success criteria, written into the draft', { timeout: 90_000 }, async () => {
    const { page, id } = await openFlow(rig, 'Outcome');
    const section = page.getByRole('group', { name: 'Outcome and success' });
    await section.waitFor(WAIT);
    await section.getByRole('textbox', { name: "New outcome field's name" }).fill('won');
    await section.getByRole('button', { name: '+ Field' }).click();
    await section.getByRole('combobox', { name: 'Type of won' }).selectOption('boolean');
    await section.getByRole('checkbox', { name: 'required' }).check();
    await section.getByRole('button', { name: '+ Outcome is' }).click();
    await section.getByRole('button', { name: '+ Reached state' }).click();
    await expect.poll(() => section.locator('[data-criterion]').count(), WAIT).toBe(2);

    await page.keyboard.press('Control+s');
    await expect.poll(() => page.getByText('Saved', { exact: true }).isVisible(), WAIT).toBe(true);
    const draft = await rig.server.request('GET', `/v1/flows/${id}/draft`, { apiKey: rig.account.apiKey });
    const parsed = parseFlow(draft.body.yaml_content);
    expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(parsed.document!.settings!.outcome).toEqual({ won: { type: 'boolean', required: true } });
    expect(parsed.document!.settings!.success).toEqual([{ outcome: 'won == true' }, { reached: parsed.document!.initial_state }]);
    await page.close();
  });
});

const FLOW = `id: booking
version: "1.0.0"
initial_state: ask
settings:
  outcome:
    booked: { type: boolean, required: true }
  success:
    - outcome: booked == true
states:
  ask:
    respond: false
    agent: { prompt: Ask for a time., tools: [book] }
    tools: { book: { description: Book it., parameters: { booked: { type: boolean, required: true } } } }
    transitions: { on_tool_call: { book: done } }
  done:
    respond: false
    agent: { prompt: Say goodbye. }
`;

describe('a session’s outcome and success in the studio', () => {
  let rig: StudioRig;
  beforeAll(async () => {
    rig = await startStudioRig({ server: await startTestServer() });
  });
  afterAll(async () => {
    const server = rig?.server;
    await rig?.close();
    await server?.close();
  });

  it('shows in the session view and as the list’s outcome and success columns and success filter', { timeout: 90_000 }, async () => {
    const flowId = await createFlow(rig.server, rig.account.apiKey, 'Booking outcome', FLOW);
    const client = await connectVoice(wsUrl(rig.server.url, `/ws?mode=flow&program_id=${flowId}&access_token=${rig.account.jwt}`));
    const sessionId = (await client.waitFor('session_started', undefined, 15_000)).session_id as string;
    await client.waitFor('flow_state');
    client.send({ type: 'simulate_tool', name: 'book', arguments: { booked: true } });
    await client.waitFor('flow_state', (e) => e.state === 'done');
    client.send({ type: 'end' });
    await client.waitFor('session_ended');
    await client.closed;
    await expect
      .poll(async () => (await rig.server.request('GET', `/v1/sessions/${sessionId}`, { apiKey: rig.account.apiKey })).body.analysis_status, WAIT)
      .toBe('done');

    const page = await rig.open(`/session?id=${sessionId}`);
    const card = page.getByRole('region', { name: 'Outcome & success' });
    await card.waitFor(WAIT);
    expect((await card.getByTestId('session-success').innerText()).trim()).toBe('Succeeded');
    expect(await card.locator('[data-outcome-field="booked"]').innerText()).toMatch(/booked\s+true\s+variable/);
    await page.close();

    const list = await rig.open('/sessions?success=true');
    await expect.poll(() => list.getByTestId('session-success').allInnerTexts(), WAIT).toEqual(['Succeeded']);
    expect(await list.getByTestId('session-outcome').allInnerTexts()).toEqual(['booked: true']);
    await list.close();
  });
});
