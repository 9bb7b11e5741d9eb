// In Chromium: test-talk on a server with no language model and no
// speech-to-text. Before Talk the panel says what this server can do; with the microphone on, the
// "cannot hear you" notice comes at once; every message is in plain words. On the graph the live
// state and path have their own colour (not the red of errors) and a legend, a staying tool's
// self-loop lights up with its count, and after the session the trace reads as a past run that
// an edit of the flow (or Clear) takes away.
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVoiceRig, type VoiceRig } from '../support/voice-server.ts';
import { launchChromium, screenshot, tempDir, writeMicWav, type TestBrowser } from './browser.ts';
import { signInBrowser } from './studio.ts';
import { WAIT, node } from './studio-editor-page.ts';

let chromium: TestBrowser;
let dir: Awaited<ReturnType<typeof tempDir>>;
let rig: VoiceRig;

beforeAll(async () => {
  dir = await tempDir();
  // A microphone that hears nothing: the server alone would never get to say it cannot hear.
  [chromium, rig] = await Promise.all([writeMicWav(dir.path, null).then((wav) => launchChromium({ micWav: wav })), startVoiceRig({ llm: 'none', stt: 'none' })]);
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  await rig?.close();
  await dir?.remove();
});

async function openTestTab(): Promise<{ page: Page; panel: Locator }> {
  const page = await chromium.newPage();
  await signInBrowser(page, rig.server.url, rig.account);
  await page.goto(`${rig.server.url}/flow-editor?flow=${encodeURIComponent(rig.flowId)}`);
  await page.getByRole('tab', { name: 'Talk', exact: true }).click();
  const panel = page.getByRole('region', { name: 'Test talk' });
  await panel.getByRole('heading', { name: 'Talk to this flow' }).waitFor(WAIT);
  return { page, panel };
}

/** The states the graph lights, as live or past: the one the session is (or ended) in, and the ones it went through. */
function graphMarks(page: Page): Promise<{ active: string[]; visited: string[]; past: string[] }> {
  return page.evaluate(() => {
    const marked = (selector: string) =>
      [...(globalThis as any).document.querySelectorAll(`.svelte-flow__node ${selector}`)].map((el: any) => el.closest('.svelte-flow__node').getAttribute('data-id')).sort();
    return { active: marked('.talk-active'), visited: marked('.talk-visited'), past: marked('.past-run') };
  });
}

/** A CSS colour as the browser computes it, e.g. var(--danger) → rgb(192, 38, 45). */
function computedColour(page: Page, css: string): Promise<string> {
  return page.evaluate((value) => {
    const doc = (globalThis as any).document;
    const probe = doc.createElement('span');
    probe.style.color = value;
    doc.body.append(probe);
    const colour = (globalThis as any).getComputedStyle(probe).color;
    probe.remove();
    return colour;
  }, css);
}

const loopLabel = (page: Page, tool: string) => page.locator('.svelte-flow__edge-label .tool', { hasText: tool });

describe('test-talk on a server with no model and no speech-to-text', () => {
  it('says before Talk what the server can do, and that it cannot hear as soon as the microphone is on, in plain words', async () => {
    const { page, panel } = await openTestTab();
    const abilities = panel.getByRole('list', { name: 'What this server can do' });
    await expect.poll(() => abilities.innerText(), WAIT).toContain('No language model');
    const said = await abilities.innerText();
    expect(said).toContain('No speech-to-text: it cannot hear you. Type your turns instead.');
    expect(said).toContain('The agent speaks with the built-in voice (flite).');

    await panel.getByRole('button', { name: 'Talk', exact: true }).click();
    await expect.poll(() => panel.getByTestId('talk-status').innerText(), WAIT).toMatch(/^Live\b/);
    // At once: nothing has been said into the (silent) microphone, so the server has not said it.
    const cannotHear = panel.locator('[data-code="stt_unavailable"]');
    await cannotHear.waitFor({ timeout: 3_000 });
    expect(await cannotHear.innerText()).toContain('This server has no speech-to-text, so it cannot hear you.');
    await expect.poll(() => panel.locator('[data-code="llm_unavailable"]').innerText(), WAIT).toContain(
      'No language model is set up, so the agent cannot answer. Walk the flow with the simulator below',
    );
    // No protocol in sight: no message types, no codes.
    const text = await panel.innerText();
    for (const protocol of ['{"type"', 'simulate_tool', 'llm_unavailable', 'stt_unavailable']) expect(text).not.toContain(protocol);
    await screenshot(page, 'studio-test-talk-plain-words');
    await panel.getByRole('button', { name: 'End', exact: true }).click();
    await expect.poll(() => panel.getByTestId('talk-status').innerText(), WAIT).toBe('Ended');
    expect(chromium.pageErrors).toEqual([]);
    await page.close();
  }, 60_000);

  it('lights the live state and path in their own colour with a legend, counts a staying tool on its loop, and shows the ended run as past until an edit', async () => {
    const { page, panel } = await openTestTab();
    await panel.getByRole('button', { name: 'Text only' }).click();
    await expect.poll(() => graphMarks(page), WAIT).toEqual({ active: ['setup'], visited: [], past: [] });
    const legend = page.getByRole('note', { name: 'Test talk on the graph' });
    expect(await legend.innerText()).toContain('Test talk, live');

    // The live state's colour is not the red of errors and problems.
    // Polled: the border eases into its colour (a CSS transition), which a loaded machine can catch midway.
    const liveColour = await computedColour(page, 'var(--live)');
    const border = () => node(page, 'setup').locator('.state').evaluate((el) => (globalThis as any).getComputedStyle(el).borderLeftColor as string);
    await expect.poll(border, WAIT).toBe(liveColour);
    expect(await border()).not.toBe(await computedColour(page, 'var(--danger)'));

    await panel.getByRole('button', { name: 'Simulate begin_game (moves to playing)' }).click();
    const begin = panel.getByRole('form', { name: 'Arguments of begin_game' });
    await begin.getByRole('textbox').nth(0).fill('a cat');
    await begin.getByRole('textbox').nth(1).fill('0');
    await begin.getByRole('button', { name: 'Fire begin_game' }).click();
    await expect.poll(() => graphMarks(page), WAIT).toEqual({ active: ['playing'], visited: ['setup'], past: [] });
    const path = () => page.locator('.svelte-flow__edge[data-id="setup→begin_game"] .svelte-flow__edge-path').evaluate((el) => (globalThis as any).getComputedStyle(el).stroke as string);
    await expect.poll(path, WAIT).toBe(liveColour);

    // record_answer stays in playing: twice, and its loop says so.
    for (const asked of ['1', '2']) {
      await panel.getByRole('button', { name: 'Simulate record_answer (stays in playing)' }).click();
      const answer = panel.getByRole('form', { name: 'Arguments of record_answer' });
      await answer.getByRole('textbox').nth(0).fill('yes');
      await answer.getByRole('textbox').nth(1).fill(asked);
      await answer.getByRole('button', { name: 'Fire record_answer' }).click();
      await expect.poll(() => loopLabel(page, 'record_answer').innerText(), WAIT).toContain(`×${asked}`);
    }
    expect(await loopLabel(page, 'record_answer').getAttribute('class')).toContain('taken');
    expect(await page.locator('.svelte-flow__edge[data-id="playing→record_answer"] .svelte-flow__edge-path').getAttribute('class')).toContain('taken');
    expect(await loopLabel(page, 'guess_wrong').getAttribute('class')).not.toContain('taken');
    await screenshot(page, 'studio-test-talk-live-path');

    // Ended: the same marks, as a past run, with a legend that says so.
    await panel.getByRole('button', { name: 'End', exact: true }).click();
    await expect.poll(() => graphMarks(page), WAIT).toEqual({ active: ['playing'], visited: ['setup'], past: ['playing', 'setup'] });
    expect(await legend.innerText()).toContain('Last test run');
    expect(await loopLabel(page, 'record_answer').getAttribute('class')).toContain('past-run');
    await screenshot(page, 'studio-test-talk-past-run');

    // Editing the flow takes the old path away; the rest of the panel stays.
    await page.getByRole('tab', { name: 'Inspector' }).click();
    await node(page, 'won').click();
    await page.getByRole('textbox', { name: 'Card prompt (shown to the user)' }).fill('You found it!');
    await expect.poll(() => graphMarks(page), WAIT).toEqual({ active: [], visited: [], past: [] });
    expect(await legend.count()).toBe(0);
    await page.getByRole('tab', { name: 'Talk', exact: true }).click();
    expect(await panel.getByTestId('talk-ended').innerText()).toContain('Session ended');
    expect(chromium.pageErrors).toEqual([]);
    await page.close();
  }, 60_000);

  it('takes an ended run off the graph with the legend\'s Clear', async () => {
    const { page, panel } = await openTestTab();
    await panel.getByRole('button', { name: 'Text only' }).click();
    await expect.poll(() => graphMarks(page), WAIT).toEqual({ active: ['setup'], visited: [], past: [] });
    await panel.getByRole('button', { name: 'End', exact: true }).click();
    await expect.poll(() => graphMarks(page), WAIT).toEqual({ active: ['setup'], visited: [], past: ['setup'] });
    await page.getByRole('note', { name: 'Test talk on the graph' }).getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => graphMarks(page), WAIT).toEqual({ active: [], visited: [], past: [] });
    await page.close();
  }, 60_000);
});
