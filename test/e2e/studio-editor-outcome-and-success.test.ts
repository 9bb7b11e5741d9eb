// The flow panel's "Outcome & success" section (docs/flows.md#outcome-and-success), as a designer
// uses it: a field and criteria added on screen become settings.outcome and settings.success in the
// saved draft, which the validator accepts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { startTestServer } from '../support/server.ts';
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
