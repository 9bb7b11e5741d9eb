import type { Locator, Page } from 'playwright-core';
import { afterThisTest } from '../support/after-this-test.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUESSING_GAME_RULES, startVoiceRig, type VoiceRig } from '../support/voice-server.ts';
import { launchChromium, say, screenshot, tempDir, useSpokenMic, writeMicWav, type TestBrowser } from './browser.ts';
import { signInBrowser } from './studio.ts';

// Test-talk in the flow editor's "Test" tab, against a real server whose providers are the
// protocol-faithful fakes. First a person talks to the guessing game (they say "I'm ready" into
// the microphone once the agent's greeting has been spoken) and watches the graph light up
// setup, then playing. Then a designer on a server with no language model and no speech-to-text, whose
// microphone is refused, walks the same flow with the simulator alone, by keyboard in part.

const PROMPT = {
  setup: 'Ten questions: the host thinks of something, you have ten yes-or-no questions to guess it.',
  playing: (asked: number) => `Ask yes-or-no questions, or name your guess. Questions asked: ${asked} of 10.`,
  won: 'You got it: a cat! Found in 1 questions.',
};

describe('test-talk in the flow editor', () => {
  let chromium: TestBrowser;
  let dir: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    dir = await tempDir();
    // Chromium's fake device stays silent; the spoken test speaks through useSpokenMic.
    chromium = await launchChromium({ micWav: await writeMicWav(dir.path, null) });
  });
  afterAll(async () => {
    await chromium?.close();
    await dir?.remove();
  });

  /** The editor of the rig's flow, signed in as its account (its refresh cookie), on the Talk tab. */
  async function openTestTab(rig: VoiceRig, setUp?: (page: Page) => Promise<void>): Promise<{ page: Page; panel: Locator }> {
    const page = await chromium.newPage();
    // Closed even when the test fails: a page left open keeps reconnecting to a server that is
    // gone, and its console errors would land in the next test's check of the shared browser.
    afterThisTest(() => page.close());
    await setUp?.(page);
    await signInBrowser(page, rig.server.url, rig.account);
    await page.goto(`${rig.server.url}/flow-editor?flow=${encodeURIComponent(rig.flowId)}`);
    await page.getByRole('tab', { name: 'Talk', exact: true }).click();
    const panel = page.getByRole('region', { name: 'Test talk' });
    await panel.getByRole('heading', { name: 'Talk to this flow' }).waitFor();
    return { page, panel };
  }

  const status = (panel: Locator) => panel.getByRole('status').first().innerText();

  /** The state the panel's card shows, and its prompt, as a person reads them. */
  async function card(panel: Locator): Promise<{ state: string; prompt: string }> {
    return { state: await panel.getByTestId('talk-state-name').innerText(), prompt: await panel.getByTestId('talk-state-prompt').innerText() };
  }

  /** The states the graph lights: the one the session is in, and the ones it went through. */
  function graphMarks(page: Page): Promise<{ active: string[]; visited: string[] }> {
    return page.evaluate(() => {
      const marked = (mark: string) =>
        [...(globalThis as any).document.querySelectorAll(`.svelte-flow__node .${mark}`)].map((el: any) => el.closest('.svelte-flow__node')?.getAttribute('data-id') ?? '?').sort();
      return { active: marked('talk-active'), visited: marked('talk-visited') };
    });
  }

  async function toolLog(panel: Locator): Promise<string[]> {
    const items = await panel.getByRole('region', { name: /Tool calls/ }).getByRole('listitem').allInnerTexts();
    return items.map((text) => text.replace(/\s+/g, ' ').trim());
  }

  describe('by voice', () => {
    let rig: VoiceRig;
    beforeAll(async () => {
      rig = await startVoiceRig({ rules: GUESSING_GAME_RULES, transcripts: ["I'm ready", 'Is it an animal?', 'Is it a cat?'] });
    });
    afterAll(async () => rig?.close());

    it('talks through the microphone and lights the graph setup → playing, with transcript, tool log, latency and the agent audible', { timeout: 120_000 }, async () => {
      const { page, panel } = await openTestTab(rig, useSpokenMic);
      expect(await graphMarks(page)).toEqual({ active: [], visited: [] });

      await panel.getByRole('button', { name: 'Talk', exact: true }).click();
      // Connecting takes well under a second on a quiet machine; beside a second npm test it took over 10 s.
      await expect.poll(() => status(panel), { timeout: 30_000 }).toMatch(/^Live\b/);
      await expect.poll(() => card(panel), { timeout: 5_000 }).toEqual({ state: 'setup', prompt: PROMPT.setup });
      await expect.poll(() => graphMarks(page), { timeout: 5_000 }).toEqual({ active: ['setup'], visited: [] });
      await expect.poll(() => panel.getByRole('log').innerText(), { timeout: 5_000 }).toContain('Welcome to ten questions!');
      // The microphone is live: the header shows its meter and a mute toggle.
      expect(await panel.getByRole('meter', { name: 'Microphone level' }).count()).toBe(1);
      expect(await panel.getByRole('button', { name: 'Mute' }).getAttribute('aria-pressed')).toBe('false');

      // The person hears the greeting out, then says "I'm ready"; heard by the fake Deepgram, the
      // model calls begin_game and the graph moves.
      const activity = () => panel.locator('.activity').innerText();
      await expect.poll(activity, { timeout: 20_000, interval: 100 }).toBe('Agent speaking');
      await expect
        .poll(activity, { timeout: 20_000, interval: 200 })
        .not.toBe('Agent speaking')
        .catch(async (error: Error) => {
          // What the panel showed (its turn decisions, transcript, notices) says why the agent kept talking.
          throw new Error(`${error.message}\nThe panel:\n${await panel.innerText()}`, { cause: error });
        });
      await say(page, "I'm ready");
      await expect.poll(() => card(panel), { timeout: 20_000 }).toEqual({ state: 'playing', prompt: PROMPT.playing(0) });
      await expect.poll(() => graphMarks(page), { timeout: 5_000 }).toEqual({ active: ['playing'], visited: ['setup'] });
      await expect.poll(() => panel.getByRole('log').innerText(), { timeout: 30_000 }).toContain('Go ahead and ask your first question.');
      await screenshot(page, 'studio-test-talk');
      // Mute silences the microphone's track and says so; unmute brings it back.
      await panel.getByRole('button', { name: 'Mute' }).click();
      expect(await panel.getByRole('button', { name: 'Unmute' }).getAttribute('aria-pressed')).toBe('true');
      await panel.getByRole('button', { name: 'Unmute' }).click();

      const userLines = await panel.locator('[data-role="user"] .text').allInnerTexts();
      expect(userLines[0]).toBe("I'm ready");
      expect((await toolLog(panel))[0]).toBe('ACCEPTED begin_game setup → playing model secret_thing = a cat · questions_asked = 0');
      expect(await panel.getByRole('region', { name: 'Variables' }).innerText()).toMatch(/secret_thing\s+a cat/);
      // The greeting and the spoken turn each reported their latency; the spoken one has STT time.
      const latency = panel.getByRole('table', { name: 'Latency per turn in milliseconds' });
      await expect.poll(() => latency.getByRole('row').count(), { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
      expect(await panel.getByRole('region', { name: 'Latency per turn' }).innerText()).toMatch(/Median \d+ ms voice to voice, \d+ ms in the server/);
      expect(await panel.getByRole('img', { name: /Speech-to-text \d+ ms/ }).count()).toBeGreaterThanOrEqual(1);

      // The agent's voice plays through the panel's <audio> element.
      expect(
        await panel.getByTestId('talk-agent-audio').evaluate((audio: any) => {
          const stream = audio.srcObject;
          return stream !== null && !audio.paused && stream.getAudioTracks().some((t: any) => t.readyState === 'live');
        }),
      ).toBe(true);

      // Hanging up: the session ends, with its duration and cost; the path stays on the graph, not live.
      await panel.getByRole('button', { name: 'End', exact: true }).click();
      await expect.poll(() => status(panel), { timeout: 5_000 }).toBe('Ended');
      expect(await panel.getByTestId('talk-ended').innerText()).toMatch(/Session ended — you ended it\.\s+\d+s · \$\d+\.\d\d charged/);
      expect(await graphMarks(page)).toEqual({ active: ['playing'], visited: ['setup'] });
      expect(await page.getByRole('tab', { name: /Test/ }).getByLabel('live').count()).toBe(0);
      expect(await panel.getByRole('textbox', { name: 'Type a turn' }).isDisabled()).toBe(true);

      const sessions = await rig.server.request('GET', '/v1/sessions', { jwt: rig.account.jwt });
      expect(sessions.body[0]).toMatchObject({ transport: 'webrtc', mode: 'flow', flow_id: rig.flowId, status: 'ended', end_reason: 'client_ended' });
      // "Clear it" takes the trail off the graph and brings back the empty state.
      await panel.getByRole('button', { name: 'Clear it' }).click();
      expect(await graphMarks(page)).toEqual({ active: [], visited: [] });
      await panel.getByRole('heading', { name: 'Talk to this flow' }).waitFor();
      expect(chromium.pageErrors).toEqual([]);
      await page.close();
    });
  });

  describe('with the simulator alone', () => {
    let rig: VoiceRig;
    beforeAll(async () => {
      rig = await startVoiceRig({ llm: 'none', stt: 'none' });
    });
    afterAll(async () => rig?.close());

    it('walks setup → playing → won by firing tools, shows a rejection, and works without a microphone', { timeout: 90_000 }, async () => {
      // The microphone is refused, as when a person clicks "Block".
      const { page, panel } = await openTestTab(rig, async (p) => {
        await p.addInitScript(() => {
          (globalThis as any).navigator.mediaDevices.getUserMedia = () => Promise.reject(new DOMException('Permission denied', 'NotAllowedError'));
        });
      });
      await panel.getByRole('button', { name: 'Talk', exact: true }).click();
      const refusal = panel.getByRole('alert').filter({ hasText: 'Microphone access was refused' });
      await refusal.waitFor();
      await refusal.getByRole('button', { name: 'Talk without a microphone' }).click();
      await expect.poll(() => status(panel), { timeout: 30_000 }).toMatch(/^Live · text only/);
      await expect.poll(() => card(panel), { timeout: 5_000 }).toEqual({ state: 'setup', prompt: PROMPT.setup });
      // No model on this server: said once, as information, not as a failure.
      await expect.poll(() => panel.locator('[data-code="llm_unavailable"]').innerText(), { timeout: 5_000 }).toContain('No language model is set up');
      expect(await graphMarks(page)).toEqual({ active: ['setup'], visited: [] });

      // A tool the state does not list is rejected, with the reason, and nothing moves.
      await panel.getByText('Try a tool this state does not list').click();
      await panel.getByRole('button', { name: 'guess_correct', exact: true }).click();
      await expect.poll(() => toolLog(panel), { timeout: 5_000 }).toEqual([
        "REJECTED guess_correct in setup simulator tool 'guess_correct' is not available in state 'setup'; available tools: begin_game",
      ]);
      expect((await card(panel)).state).toBe('setup');

      // begin_game by keyboard: its form opens on Enter, refuses an empty required field, then fires.
      await panel.getByRole('button', { name: 'Simulate begin_game (moves to playing)' }).focus();
      await page.keyboard.press('Enter');
      const form = panel.getByRole('form', { name: 'Arguments of begin_game' });
      await form.waitFor();
      await page.keyboard.press('Enter');
      await expect.poll(() => form.innerText()).toContain('Required');
      expect(await page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute('aria-invalid'))).toBe('true');
      await page.keyboard.type('a cat');
      await page.keyboard.press('Tab');
      await page.keyboard.type('0');
      await page.keyboard.press('Enter');
      await expect.poll(() => card(panel), { timeout: 5_000 }).toEqual({ state: 'playing', prompt: PROMPT.playing(0) });
      await expect.poll(() => graphMarks(page), { timeout: 5_000 }).toEqual({ active: ['playing'], visited: ['setup'] });

      // record_answer stays in playing; its form starts from the variable questions_asked.
      await panel.getByRole('button', { name: 'Simulate record_answer (stays in playing)' }).click();
      const answer = panel.getByRole('form', { name: 'Arguments of record_answer' });
      expect(await answer.getByRole('textbox').nth(1).inputValue()).toBe('0');
      await answer.getByRole('textbox').nth(0).fill('yes');
      await answer.getByRole('textbox').nth(1).fill('1');
      await answer.getByRole('button', { name: 'Fire record_answer' }).click();
      await expect.poll(() => card(panel), { timeout: 5_000 }).toEqual({ state: 'playing', prompt: PROMPT.playing(1) });

      // guess_correct has no parameters: it fires at once, and the game is won.
      await panel.getByRole('button', { name: 'Simulate guess_correct (moves to won)' }).click();
      await expect.poll(() => card(panel), { timeout: 5_000 }).toEqual({ state: 'won', prompt: PROMPT.won });
      await expect.poll(() => graphMarks(page), { timeout: 5_000 }).toEqual({ active: ['won'], visited: ['playing', 'setup'] });
      expect(await toolLog(panel)).toEqual([
        "REJECTED guess_correct in setup simulator tool 'guess_correct' is not available in state 'setup'; available tools: begin_game",
        'ACCEPTED begin_game setup → playing simulator secret_thing = a cat · questions_asked = 0',
        'ACCEPTED record_answer stays in playing simulator last_answer = yes · questions_asked = 1',
        'ACCEPTED guess_correct playing → won simulator',
      ]);
      const variables = await panel.getByRole('region', { name: 'Variables' }).getByRole('row').allInnerTexts();
      expect(variables.map((row) => row.replace(/\s+/g, ' ').trim())).toEqual(['last_answer yes', 'questions_asked 1', 'secret_thing a cat']);
      // The speech cue of guess_correct was spoken (flite needs no key) and shows in the transcript.
      await expect.poll(() => panel.getByRole('log').innerText(), { timeout: 5_000 }).toContain("Yes! That's it!");

      // Typed turns work with no speech-to-text at all.
      await panel.getByRole('textbox', { name: 'Type a turn' }).fill('Can we play again?');
      await page.keyboard.press('Enter');
      await expect.poll(() => panel.locator('[data-role="user"] .text').allInnerTexts(), { timeout: 5_000 }).toEqual(['Can we play again?']);

      // Nothing in the panel pokes out of its column at 1280×800.
      const overflow = await panel.evaluate((root) => {
        const box = root.getBoundingClientRect();
        const out = [...root.querySelectorAll('*')].filter((el) => {
          const r = el.getBoundingClientRect();
          return r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1);
        });
        return { scrolls: root.scrollWidth > root.clientWidth, out: out.map((el) => el.outerHTML.slice(0, 80)), width: box.width };
      });
      expect(overflow).toMatchObject({ scrolls: false, out: [] });
      expect(overflow.width).toBeGreaterThanOrEqual(380);
      await screenshot(page, 'studio-simulator');

      await panel.getByRole('button', { name: 'End', exact: true }).click();
      await expect.poll(() => status(panel), { timeout: 5_000 }).toBe('Ended');
      expect(chromium.pageErrors).toEqual([]);
      await page.close();
    });

    it("shows the server's refusal and lets the designer try again", { timeout: 30_000 }, async () => {
      const { page, panel } = await openTestTab(rig);
      // The flow is deleted behind the editor's back: the offer is refused with the API's message.
      expect((await rig.server.request('DELETE', `/v1/flows/${rig.flowId}`, { apiKey: rig.account.apiKey })).status).toBeLessThan(300);
      await panel.getByRole('button', { name: 'Text only' }).click();
      const alert = panel.getByRole('alert');
      await alert.waitFor();
      expect(await alert.innerText()).toContain(`No flow with the id "${rig.flowId}".`);
      expect(await status(panel)).toBe('Not connected');
      expect(await panel.getByRole('button', { name: 'Talk again' }).isEnabled()).toBe(true);
      expect(await graphMarks(page)).toEqual({ active: [], visited: [] });
      await page.close();
    });
  });
});
