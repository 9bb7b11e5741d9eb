// In Chromium against a real server: Ctrl+S right after typing saves
// what was typed (from an inspector field, a tool's field and the YAML pane), and the keyboard
// focus goes where the designer expects: it stays in the inspector after a rename, moves to a new
// parameter's name, and Tab walks the canvas in the flow's reading order after its toolbar.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { WAIT, editorOnOnePage, focused, node, nodeNames, storedYaml } from './studio-editor-page.ts';
import { studioSuite } from './studio-screens-server.ts';

const rig = studioSuite();
// Each test opens a flow of its own, on one page for the file (editorOnOnePage).
const openFlow = editorOnOnePage(rig);

/** Three states written in the YAML in the reverse of the order the conversation goes through them. */
const BACKWARDS_YAML = `id: backwards
version: "1.0.0"
initial_state: a_start
settings:
  base_system_prompt: Be brief.
states:
  c_end:
    agent:
      prompt: Say goodbye.
      tools: []
  b_middle:
    agent:
      prompt: Ask for the name.
      tools: [finish]
    tools:
      finish: { description: Done. }
    transitions: { on_tool_call: { finish: c_end } }
  a_start:
    agent:
      prompt: Greet.
      tools: [go]
    tools:
      go: { description: Go on. }
    transitions: { on_tool_call: { go: b_middle } }
`;

describe('saving right after typing', () => {
  it('Ctrl+S at once after typing in the agent prompt saves the new text, and the header says Saved', async () => {
    const { page, id } = await openFlow('Save at once');
    await node(page, 'won').click();
    const agentPrompt = page.getByRole('textbox', { name: /^Agent prompt/ });
    await agentPrompt.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type(' Then offer a rematch.');
    // No pause: the field has not written the text into the flow yet.
    await page.keyboard.press('Control+s');
    await expect.poll(async () => parseFlow(await storedYaml(rig(), id)).document?.states.won?.agent.prompt ?? '', WAIT).toMatch(/Then offer a rematch\.\s*$/);
    await expect.poll(() => page.getByText('Saved', { exact: true }).isVisible(), WAIT).toBe(true);
    expect(await page.getByText('Unsaved changes').count()).toBe(0);
    // What the field shows is what was saved: nothing is left waiting to be written.
    expect(await agentPrompt.inputValue()).toMatch(/Then offer a rematch\.\s*$/);
  }, 90_000);

  it("Ctrl+S while typing a tool's description or a state name saves them too, and so does typing in the YAML", async () => {
    const { page, id } = await openFlow('Save every field');
    await node(page, 'playing').click();
    await page.locator('.inspector li.tool[data-tool="record_answer"] .head').click();
    const description = page.locator('.inspector li.tool[data-tool="record_answer"]').getByRole('textbox', { name: /^Description/ });
    await description.fill('Store the answer to the last question.');
    await page.keyboard.press('Control+s');
    await expect.poll(async () => parseFlow(await storedYaml(rig(), id)).document?.states.playing?.tools?.record_answer?.description, WAIT).toBe(
      'Store the answer to the last question.',
    );

    // A state name commits on Enter or leaving the field; Ctrl+S is leaving it for the save.
    const stateName = page.getByRole('textbox', { name: 'State', exact: true });
    await stateName.fill('asking');
    await page.keyboard.press('Control+s');
    await expect.poll(async () => Object.keys(parseFlow(await storedYaml(rig(), id)).document?.states ?? {}), WAIT).toEqual(['setup', 'asking', 'won', 'lost']);

    await page.getByRole('tab', { name: 'YAML' }).click();
    await page.locator('.cm-content').click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('# saved at once');
    await page.keyboard.press('Control+s');
    await expect.poll(async () => (await storedYaml(rig(), id)).trimEnd().endsWith('# saved at once'), WAIT).toBe(true);
    await expect.poll(() => page.getByText('Saved', { exact: true }).isVisible(), WAIT).toBe(true);
  }, 90_000);
});

describe('where the keyboard focus goes', () => {
  it('stays in the inspector after renaming a state with Enter or Tab, with no Svelte warning', async () => {
    const warningsBefore = rig().chromium.pageWarnings.length;
    const { page } = await openFlow('Rename focus');
    await node(page, 'won').click();
    const stateName = page.getByRole('textbox', { name: 'State', exact: true });
    await stateName.fill('victory');
    await stateName.press('Enter');
    await expect.poll(() => nodeNames(page), WAIT).toContain('victory');
    expect(await focused(page)).toMatchObject({ tag: 'input', label: 'State', value: 'victory', inInspector: true });

    // Tab commits the name and moves on to the next control of the inspector.
    await page.keyboard.press('Control+a');
    await page.keyboard.type('winner');
    await page.keyboard.press('Tab');
    await expect.poll(() => nodeNames(page), WAIT).toContain('winner');
    expect(await focused(page)).toMatchObject({ tag: 'button', label: 'Set as start', inInspector: true });
    expect(rig().chromium.pageWarnings.slice(warningsBefore)).toEqual([]);
  }, 60_000);

  it('puts the focus in a new parameter\'s name, which keeps it through its rename', async () => {
    const { page } = await openFlow('Parameter focus');
    await node(page, 'lost').click();
    await page.locator('.inspector li.tool[data-tool="play_again"] .head').click();
    await page.getByRole('button', { name: '+ Parameter' }).click();
    await expect.poll(() => focused(page), WAIT).toMatchObject({ tag: 'input', label: 'Parameter name', value: 'value', inInspector: true });
    // The name is selected: typing replaces it.
    await page.keyboard.type('difficulty');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.inspector [data-parameter="difficulty"]').count(), WAIT).toBe(1);
    expect(await focused(page)).toMatchObject({ tag: 'input', label: 'Parameter name', value: 'difficulty', inInspector: true });
  }, 60_000);

  it('Tabs from the canvas toolbar to the start state, then through the states in the order the flow goes', async () => {
    const { page } = await openFlow('Tab order', BACKWARDS_YAML);
    await page.getByRole('toolbar', { name: 'Canvas' }).getByRole('button', { name: '+ State' }).focus();
    const visited: Array<string | null> = [];
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('Tab');
      visited.push((await focused(page)).state);
    }
    expect(visited).toEqual(['a_start', 'b_middle', 'c_end']);
    // Back from the start state is the toolbar.
    await node(page, 'a_start').focus();
    await page.keyboard.press('Shift+Tab');
    expect(await focused(page)).toMatchObject({ tag: 'button', label: 'Fit', state: null });
  }, 60_000);
});
