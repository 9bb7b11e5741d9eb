// Issue 15 item 5: a stored session opens from the Sessions list into its view: the conversation
// with tool calls inline, the path with a scrubber, the variables, per-turn latency and the
// recording; "Open the flow" goes to the editor.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUESSING_GAME_RULES, connectSession, startVoiceRig, type VoiceRig } from '../support/voice-server.ts';
import { launchChromium, screenshot, tempDir, writeMicWav, type TestBrowser } from './browser.ts';
import { signInBrowser } from './studio.ts';

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

  it('opens from the list and shows the conversation, the tool calls, the path, the variables and the recording', { timeout: 60_000 }, async () => {
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
    // The recording is loaded with the signed-in account's token and can be played.
    const audio = page.getByLabel('Recording of the session, caller left, agent right');
    await audio.waitFor();
    // The fake voice speaks 20 ms a word, so this typed game's recording is a fraction of a second.
    await expect.poll(() => audio.evaluate((el) => (el as unknown as { duration: number }).duration), { timeout: 10_000 }).toBeGreaterThan(0.1);
    await screenshot(page, 'studio-session-view-1280x800');
  });

  it('scrubs back to the start: the path shortens and later lines dim', { timeout: 30_000 }, async () => {
    const scrubber = page.getByRole('slider', { name: 'Moment of the session' });
    await scrubber.fill('0');
    await expect.poll(async () => (await page.getByRole('list', { name: 'States passed through' }).innerText()).trim()).toBe('setup');
    expect(await page.locator('.moment.later').count()).toBeGreaterThan(3);
  });

  it('opens the flow in the editor', { timeout: 30_000 }, async () => {
    await page.getByRole('link', { name: 'Open the flow' }).click();
    await page.waitForURL(`${rig.server.url}/flow-editor?flow=${rig.flowId}`);
    await page.close();
  });
});
