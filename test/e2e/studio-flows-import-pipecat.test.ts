import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { importPipecatFlow } from '../../server/flow/pipecat/index.ts';
import { GUESSING_GAME_YAML, createFlow } from '../support/server.ts';
import { screenshot, tempDir } from './browser.ts';
import { studioSuite } from './studio-screens-server.ts';

// Pipecat Flows in the studio: the flows screen's Import takes a FlowConfig (told by its shape)
// and says what did not map; the editor exports a flow as a FlowConfig.
const FOOD_ORDERING = readFileSync(new URL('../flow/pipecat/food-ordering.flowconfig.json', import.meta.url), 'utf8');

describe('Pipecat Flows FlowConfig import and export in the studio', () => {
  const rig = studioSuite();
  let dir: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    dir = await tempDir();
  });
  afterAll(async () => {
    await dir?.remove();
  });

  const flows = async () => (await rig().server.request('GET', '/v1/flows', { jwt: rig().account.jwt })).body as Array<{ id: string; name: string }>;

  it('imports a FlowConfig JSON file as a flow, listing what did not map at its lines in the file', { timeout: 60_000 }, async () => {
    const path = join(dir.path, 'food-ordering.json');
    await writeFile(path, FOOD_ORDERING);
    const expected = importPipecatFlow(FOOD_ORDERING);
    const minimum = expected.diagnostics.find((d) => d.message.startsWith('`minimum`'))!;

    const page = await rig().open('/');
    await page.getByRole('heading', { name: 'Flows', level: 1 }).waitFor();
    await page.getByLabel('Import a flow from a YAML file').setInputFiles(path);
    const dialog = page.getByRole('dialog', { name: 'Import a flow' });
    await dialog.getByTestId('pipecat-source').waitFor();
    await dialog.getByText(/^The converted flow works\./).waitFor();
    const problems = await dialog.getByRole('region', { name: 'Problems' }).innerText();
    expect(problems).toContain(`${minimum.line}:${minimum.column}`);
    expect(problems).toContain('pipecat_handler_not_run');
    expect(problems).toContain('pipecat_action_moved');
    await screenshot(page, 'studio-flows-import-pipecat');

    await dialog.getByLabel('Name').fill('Food ordering');
    await dialog.getByRole('button', { name: 'Import flow' }).click();
    await page.getByRole('table', { name: 'Flows' }).getByRole('link', { name: 'Food ordering', exact: true }).waitFor();
    const stored = (await flows()).find((f) => f.name === 'Food ordering')!;
    const record = await rig().server.request('GET', `/v1/flows/${stored.id}`, { jwt: rig().account.jwt });
    expect(record.body.yaml_content).toBe(expected.yaml);
    const document = parseFlow(record.body.yaml_content).document!;
    expect(Object.keys(document.states)).toEqual(['start', 'choose_pizza', 'choose_sushi', 'confirm', 'end']);
    await page.close();
  });

  it('exports the flow in the editor as a FlowConfig, and says what it could not carry', { timeout: 60_000 }, async () => {
    const id = await createFlow(rig().server, rig().account.apiKey, 'Guessing game', GUESSING_GAME_YAML);
    const page = await rig().open(`/flow-editor?flow=${id}`);
    await page.locator('.svelte-flow__node').first().waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: 'Export as Pipecat FlowConfig' }).click();
    const choice = page.getByRole('dialog', { name: 'Export as a Pipecat FlowConfig' });
    const [download] = await Promise.all([page.waitForEvent('download'), choice.getByRole('button', { name: 'FlowConfig before 1.0 (JSON)' }).click()]);
    expect(download.suggestedFilename()).toBe('guessing-game.pipecat.json');
    const config = JSON.parse(await readFile((await download.path())!, 'utf8'));
    expect(config.initial_node).toBe('setup');
    expect(Object.keys(config.nodes)).toEqual(['setup', 'playing', 'won', 'lost']);
    expect(config.nodes.playing.functions.map((f: { function: { name: string } }) => f.function.name)).toEqual(['record_answer', 'guess_correct', 'guess_wrong', 'out_of_questions']);

    const notes = page.getByRole('dialog', { name: 'Exported as a Pipecat FlowConfig' });
    await notes.waitFor();
    expect(await notes.getByTestId('pipecat-export-notes').innerText()).toContain('speech cue of "begin_game"');
    await notes.getByRole('button', { name: 'Close' }).click();
    await notes.waitFor({ state: 'hidden' });

    // The YAML FlowConfig of Pipecat Flows 1.x: one YAML file, its tools kept in its voxflow comment.
    await page.getByRole('button', { name: 'Export as Pipecat FlowConfig' }).click();
    const [yamlDownload] = await Promise.all([page.waitForEvent('download'), choice.getByRole('button', { name: 'YAML FlowConfig (Pipecat Flows 1.x)' }).click()]);
    expect(yamlDownload.suggestedFilename()).toBe('guessing-game.pipecat.yaml');
    const text = await readFile((await yamlDownload.path())!, 'utf8');
    expect(text).toContain('\n# voxflow:\n#   functions:\n#     begin_game:');
    expect(importPipecatFlow(text).format).toBe('declarative');
    await notes.waitFor();
    await notes.getByRole('button', { name: 'Close' }).click();
    await page.close();
  });
});
