// A stored session opens from the Sessions list into its view: the conversation
// with tool calls inline, the path with a scrubber and replayed on the flow's graph, the
// variables, per-turn latency and the recording; "Open the flow at this state" opens the editor
// with the scrubber's state selected, "Open the flow" goes to the editor. A test-talk in the
// editor's Talk tab, once ended, opens the same view ("View session").
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUESSING_GAME_YAML } from '../support/server.ts';
import { GUESSING_GAME_RULES, connectSession, startVoiceRig, type VoiceRig } from '../support/voice-server.ts';
import { launchChromium, screenshot, tempDir, writeMicWav, type TestBrowser } from './browser.ts';
import { signInBrowser } from './studio.ts';

/** The states the session view's graph marks: the one at the scrubber's moment, the ones passed through before it. */
function graphMarks(graph: Locator): Promise<{ active: string[]; visited: string[] }> {
  return graph.evaluate((root) => {
    const marked = (mark: string) => [...root.querySelectorAll(`.svelte-flow__node .${mark}`)].map((el) => el.closest('.svelte-flow__node')?.getAttribute('data-id') ?? '?').sort();
    return { active: marked('talk-active'), visited: marked('talk-visited') };
  });
}

/**
 * The transitions the graph paints as taken (their edge ids: state→tool); null before any edge is
 * drawn. The graph draws its edges a frame or more after its nodes (once it has measured them),
 * so a check right after the nodes' marks can see none yet: poll this.
 */
function takenEdges(graph: Locator): Promise<string[] | null> {
  return graph.evaluate((root) => {
    const edges = [...root.querySelectorAll('.svelte-flow__edge')];
    if (edges.length === 0) return null;
    return edges.filter((edge) => edge.querySelector('.svelte-flow__edge-path.taken')).map((edge) => edge.getAttribute('data-id') ?? '?').sort();
  });
}

describe('the session view', () => {
  let rig: VoiceRig;
  let chromium: TestBrowser;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let sessionId: string;

  beforeAll(async () => {
    dir = await tempDir();
    [rig, chromium] = await Promise.all([
      startVoiceRig({ rules: GUESSING_GAME_RULES, tts: 'openai', openai: { msPerWord: 20 } }),
      writeMicWav(dir.path, null).then((wav) => launchChromium({ micWav: wav })),
    ]);
    // A backend-started, recorded game, typed to a win.
    const client = await connectSession(rig, { flow_id: rig.flowId, record: true });
    sessionId = (await client.waitFor('session_started')).session_id;
    await client.waitFor('agent_stopped_speaking');
    client.send({ type: 'text', text: "I'm ready" });
    await client.waitFor('transcript', (e) => e.role === 'agent' && /first question/.test(e.text));
    client.send({ type: 'text', text: 'Is it an animal?' });
    await client.waitFor('transcript', (e) => e.role === 'agent' && /next question/.test(e.text));
    client.send({ type: 'text', text: 'Is it a cat?' });
    await client.waitFor('flow_state', (e) => e.state === 'won');
    client.send({ type: 'end' });
    await client.waitFor('session_ended');
    await client.closed;
  }, 90_000);
  afterAll(async () => {
    await chromium?.close();
    await rig?.close();
    await dir?.remove();
  });

  let page: Page;

  it('opens from the list and shows the conversation, the tool calls, the path, the variables and the recording', { timeout: 120_000 }, async () => {
    page = await chromium.newPage();
    await signInBrowser(page, rig.server.url, rig.account);
    await page.goto(`${rig.server.url}/sessions`);
    await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
    await page.getByRole('link', { name: /^Open the session of/ }).first().click();
    await page.waitForURL(`${rig.server.url}/session?id=${sessionId}`);
    await page.getByRole('heading', { name: 'Session', level: 1 }).waitFor();

    const conversation = page.getByRole('list', { name: 'What happened, in order' });
    await conversation.waitFor();
    const text = await conversation.innerText();
    for (const said of ["I'm ready", 'Is it an animal?', 'Is it a cat?']) expect(text).toContain(said);
    expect(text).toMatch(/begin_game\s*accepted\s*setup → playing/);
    expect(text).toMatch(/guess_correct\s*accepted\s*playing → won/);
    expect(await page.getByRole('list', { name: 'States passed through' }).innerText()).toMatch(/setup\s*playing\s*won/);
    const variables = (await page.getByRole('table', { name: 'Variables at the end' }).textContent()) ?? '';
    expect(variables).toContain('secret_thing');
    expect(variables).toContain('a cat');
    // Names as the flow writes them, not in the capitals of column headers.
    const name = page.getByRole('table', { name: 'Variables at the end' }).getByRole('rowheader', { name: 'secret_thing' });
    expect(await name.innerText()).toBe('secret_thing');
    // The recording is loaded with the signed-in account's token and can be played.
    const audio = page.getByLabel('Recording of the session, caller left, agent right');
    await audio.waitFor();
    // The fake voice speaks 20 ms a word, so this typed game's recording is a fraction of a second.
    await expect.poll(() => audio.evaluate((el) => (el as unknown as { duration: number }).duration), { timeout: 30_000 }).toBeGreaterThan(0.1);
    await screenshot(page, 'studio-session-view-1280x800');
  });

  it("replays the whole path on the flow's graph: the states and transitions taken, the last state marked", { timeout: 90_000 }, async () => {
    const graph = page.getByTestId('session-graph');
    await graph.locator('.svelte-flow__node').first().waitFor({ timeout: 30_000 });
    // The scrubber starts at the end: the game was won.
    await expect.poll(() => graphMarks(graph), { timeout: 30_000 }).toEqual({ active: ['won'], visited: ['playing', 'setup'] });
    await expect.poll(() => takenEdges(graph), { timeout: 30_000 }).toEqual(['playing→guess_correct', 'playing→record_answer', 'setup→begin_game']);
    expect(await page.getByTestId('session-graph-drawn').innerText()).toBe('Version 1 of “Guessing game”, which this session ran.');
    // Shown, not edited: no adding states, no laying out again.
    expect(await graph.getByRole('button', { name: '+ State' }).count()).toBe(0);
    expect(await graph.getByRole('note', { name: 'The session on the graph' }).innerText()).toMatch(/At \d+:\d\d\.\d:/);
    // Keys pressed over a graph that is only shown delete nothing and leave the console quiet.
    const warningsBefore = chromium.pageWarnings.length;
    await graph.locator('.svelte-flow__node').first().click();
    await page.keyboard.press('Delete');
    await page.keyboard.press('a');
    expect(await graph.locator('.svelte-flow__node').count()).toBeGreaterThan(0);
    expect(chromium.pageWarnings.slice(warningsBefore)).toEqual([]);
    await graph.scrollIntoViewIfNeeded();
    await screenshot(page, 'studio-session-view-graph-1280x800');
  });

  it('scrolls in one place: the page itself never scrolls, however far down the view is scrolled', { timeout: 60_000 }, async () => {
    // Down at the latency table, the last thing on the page.
    await page.getByRole('table', { name: /latency/i }).scrollIntoViewIfNeeded();
    const sizes = await page.evaluate(() => {
      const main = (globalThis as any).document.querySelector('main');
      const root = (globalThis as any).document.scrollingElement;
      return { main: [main.scrollHeight, main.clientHeight] as number[], root: [root.scrollHeight, root.clientHeight] as number[] };
    });
    // The view is longer than the window, and only <main> scrolls it: no second scrollbar onto blank page.
    expect(sizes.main[0]).toBeGreaterThan(sizes.main[1]!);
    expect(sizes.root[0]).toBe(sizes.root[1]);

    // The next screen opens at its top, not at the offset this one was scrolled to (<main> is
    // the scroll container both screens share). Settings is longer than the window too, so it
    // could keep the offset. Twice: the first time, its code loads while <main> is empty.
    const mainScroll = () => page.evaluate(() => {
      const main = (globalThis as any).document.querySelector('main');
      return { top: main.scrollTop as number, scrollable: main.scrollHeight > main.clientHeight };
    });
    for (const time of ['first', 'second']) {
      await page.getByRole('table', { name: /latency/i }).scrollIntoViewIfNeeded();
      expect((await mainScroll()).top, time).toBeGreaterThan(0);
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
      expect(await mainScroll(), time).toEqual({ top: 0, scrollable: true });
      await page.goBack();
      await page.getByRole('slider', { name: 'Moment of the session' }).waitFor();
    }
  });

  it('scrubs back to the start: the path shortens, later lines dim, and the graph marks the state of that moment', { timeout: 90_000 }, async () => {
    const scrubber = page.getByRole('slider', { name: 'Moment of the session' });
    const graph = page.getByTestId('session-graph');
    await scrubber.fill('0');
    await expect.poll(async () => (await page.getByRole('list', { name: 'States passed through' }).innerText()).trim()).toBe('setup');
    expect(await page.locator('.moment.later').count()).toBeGreaterThan(3);
    await expect.poll(() => graphMarks(graph)).toEqual({ active: ['setup'], visited: [] });
    await expect.poll(() => takenEdges(graph)).toEqual([]);

    // A moment after the game began and before it was won: in playing, having come from setup.
    const detail = (await rig.server.request('GET', `/v1/sessions/${sessionId}`, { jwt: rig.account.jwt })).body;
    const start = detail.started_at ?? detail.created_at;
    const began = detail.path.find((p: { state: string }) => p.state === 'playing').at - start;
    const won = detail.path.find((p: { state: string }) => p.state === 'won').at - start;
    // A short session's scrubber moves in hundredths of a second.
    const middle = Math.round(((began + won) / 2) * 100) / 100;
    expect(middle).toBeGreaterThanOrEqual(began);
    expect(middle).toBeLessThan(won);
    await scrubber.fill(middle.toFixed(2));
    await expect.poll(() => graphMarks(graph)).toEqual({ active: ['playing'], visited: ['setup'] });
    // The game began (setup→begin_game); it was not yet won (no playing→guess_correct).
    await expect
      .poll(() => takenEdges(graph))
      .toSatisfy((edges: string[] | null) => edges !== null && edges.includes('setup→begin_game') && !edges.includes('playing→guess_correct'));
    expect(await page.getByTestId('session-state-now').innerText()).toBe('playing');
  });

  it('opens the flow at the state of that moment: the editor with that state selected', { timeout: 90_000 }, async () => {
    await page.getByRole('link', { name: 'Open the flow at this state' }).click();
    await page.waitForURL(`${rig.server.url}/flow-editor?flow=${rig.flowId}&state=playing`);
    await page.locator('.svelte-flow__node[data-id="playing"] .state.selected').waitFor({ timeout: 30_000 });
    expect(await page.locator('.svelte-flow__node .state.selected').count()).toBe(1);
    expect(await page.locator('.inspector .title input').inputValue()).toBe('playing');
    await page.goBack();
    await page.getByRole('heading', { name: 'Session', level: 1 }).waitFor();
  });

  it('opens the flow in the editor', { timeout: 90_000 }, async () => {
    await page.getByRole('link', { name: 'Open the flow', exact: true }).click();
    await page.waitForURL(`${rig.server.url}/flow-editor?flow=${rig.flowId}`);
    expect(chromium.pageErrors).toEqual([]);
    await page.close();
  });

  it('opens from the Talk tab: a typed test-talk, once ended, has "View session", which opens its view', { timeout: 120_000 }, async () => {
    const talk = await chromium.newPage();
    await signInBrowser(talk, rig.server.url, rig.account);
    await talk.goto(`${rig.server.url}/flow-editor?flow=${encodeURIComponent(rig.flowId)}`);
    await talk.getByRole('tab', { name: 'Talk', exact: true }).click();
    const panel = talk.getByRole('region', { name: 'Test talk' });
    await panel.getByRole('button', { name: 'Text only' }).click();
    await expect.poll(() => panel.getByTestId('talk-status').innerText(), { timeout: 30_000 }).toMatch(/^Live · text only/);
    await expect.poll(() => panel.getByRole('log').innerText(), { timeout: 30_000 }).toContain('Welcome to ten questions!');
    // A tool the state does not list, fired from the simulator: rejected, with the reason.
    await panel.getByText('Try a tool this state does not list').click();
    await panel.getByRole('button', { name: 'guess_correct', exact: true }).click();
    await expect.poll(() => panel.getByRole('region', { name: /Tool calls/ }).innerText(), { timeout: 30_000 }).toMatch(/REJECTED/i);
    await panel.getByRole('textbox', { name: 'Type a turn' }).fill("I'm ready");
    await talk.keyboard.press('Enter');
    await expect.poll(() => panel.getByTestId('talk-state-name').innerText(), { timeout: 30_000 }).toBe('playing');
    await panel.getByRole('button', { name: 'End', exact: true }).click();
    await expect.poll(() => panel.getByTestId('talk-status').innerText(), { timeout: 30_000 }).toBe('Ended');

    const newest = (await rig.server.request('GET', '/v1/sessions', { jwt: rig.account.jwt })).body[0];
    expect(newest.id).not.toBe(sessionId);
    await panel.getByRole('link', { name: 'View session' }).click();
    await talk.waitForURL(`${rig.server.url}/session?id=${newest.id}`);
    await talk.getByRole('heading', { name: 'Session', level: 1 }).waitFor();
    const conversation = await talk.getByRole('list', { name: 'What happened, in order' }).innerText();
    expect(conversation).toMatch(/begin_game\s*accepted\s*setup → playing/);
    // The rejected call is inline too, with why it was refused.
    expect(conversation).toMatch(/guess_correct\s*rejected\s*in setup: tool 'guess_correct' is not available in state 'setup'; available tools: begin_game\s*\(simulator\)/);
    const graph = talk.getByTestId('session-graph');
    await expect.poll(() => graphMarks(graph), { timeout: 30_000 }).toEqual({ active: ['playing'], visited: ['setup'] });
    await expect.poll(() => takenEdges(graph), { timeout: 30_000 }).toEqual(['setup→begin_game']);
    await screenshot(talk, 'studio-session-view-from-test-tab-1280x800');
    expect(chromium.pageErrors).toEqual([]);
    await talk.close();
  });

  it('draws the version of the flow the session ran, not one published since', { timeout: 90_000 }, async () => {
    // Version 2 renames playing: the first session's path still reads on version 1.
    const renamed = GUESSING_GAME_YAML.replaceAll('playing', 'guessing');
    expect((await rig.server.request('PUT', `/v1/flows/${rig.flowId}`, { apiKey: rig.account.apiKey, body: { yaml_content: renamed } })).status).toBe(200);
    const view = await chromium.newPage();
    await signInBrowser(view, rig.server.url, rig.account);
    await view.goto(`${rig.server.url}/session?id=${sessionId}`);
    const graph = view.getByTestId('session-graph');
    await expect.poll(() => graphMarks(graph), { timeout: 30_000 }).toEqual({ active: ['won'], visited: ['playing', 'setup'] });
    expect(await view.getByTestId('session-graph-drawn').innerText()).toBe('Version 1 of “Guessing game”, which this session ran.');
    expect(await graph.locator('.svelte-flow__node[data-id="guessing"]').count()).toBe(0);
    await view.close();
  });

  it("draws a studio test's session on the draft it tested", { timeout: 120_000 }, async () => {
    // The designer's saved draft renames setup (version 2, published, has guessing for playing).
    const draft = GUESSING_GAME_YAML.replaceAll('playing', 'guessing').replaceAll('setup', 'warmup');
    expect((await rig.server.request('PUT', `/v1/flows/${rig.flowId}/draft`, { jwt: rig.account.jwt, body: { yaml_content: draft } })).status).toBe(200);
    const talk = await chromium.newPage();
    await signInBrowser(talk, rig.server.url, rig.account);
    await talk.goto(`${rig.server.url}/flow-editor?flow=${encodeURIComponent(rig.flowId)}`);
    await talk.getByRole('tab', { name: 'Talk', exact: true }).click();
    const panel = talk.getByRole('region', { name: 'Test talk' });
    await panel.getByRole('button', { name: 'Text only' }).click();
    await expect.poll(() => panel.getByTestId('talk-state-name').innerText(), { timeout: 30_000 }).toBe('warmup');
    await panel.getByRole('textbox', { name: 'Type a turn' }).fill("I'm ready");
    await talk.keyboard.press('Enter');
    await expect.poll(() => panel.getByTestId('talk-state-name').innerText(), { timeout: 30_000 }).toBe('guessing');
    await panel.getByRole('button', { name: 'End', exact: true }).click();
    await expect.poll(() => panel.getByTestId('talk-status').innerText(), { timeout: 30_000 }).toBe('Ended');
    await panel.getByRole('link', { name: 'View session' }).click();
    await talk.getByRole('heading', { name: 'Session', level: 1 }).waitFor();
    const graph = talk.getByTestId('session-graph');
    await expect.poll(() => graphMarks(graph), { timeout: 30_000 }).toEqual({ active: ['guessing'], visited: ['warmup'] });
    expect(await talk.getByTestId('session-graph-drawn').innerText()).toBe('The draft of “Guessing game” as it is now: this session tested the draft.');
    expect(chromium.pageErrors).toEqual([]);
    await talk.close();
  });
});
