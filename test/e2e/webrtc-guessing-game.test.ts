import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlow } from '../support/server.ts';
import { GUESSING_GAME_RULES, startVoiceRig, type VoiceRig } from '../support/voice-server.ts';
import { inboundAudio, launchChromium, pageEvents, say, screenshot, signIn, tempDir, useSpokenMic, writeMicWav, type TestBrowser } from './browser.ts';

// A person opens /test in Chromium, signs in, picks the guessing game, clicks Connect and plays
// it by voice: each time the agent has finished speaking they say one utterance into the
// microphone, and the Deepgram fake hears each as the next line of the game.
describe('the guessing game over WebRTC from the /test page', () => {
  let rig: VoiceRig;
  let chromium: TestBrowser;
  let dir: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    dir = await tempDir();
    [rig] = await Promise.all([
      startVoiceRig({ rules: GUESSING_GAME_RULES, transcripts: ["I'm ready", 'Is it an animal?', 'Is it a cat?'] }),
      // The microphone is the test's (useSpokenMic); Chromium's fake device stays silent.
      writeMicWav(dir.path, null).then(async (wav) => {
        chromium = await launchChromium({ micWav: wav });
      }),
    ]);
  });
  afterAll(async () => {
    await chromium?.close();
    await rig?.close();
    await dir?.remove();
  });

  const text = (page: Page, selector: string) => page.locator(selector).innerText();
  /** Waits until the page shows `state` with `prompt` on its card, as a person would read it. */
  async function seeState(page: Page, state: string, prompt: string, timeout: number): Promise<void> {
    await expect
      .poll(async () => ({ state: await text(page, '#state-name'), card: await text(page, '#card-prompt') }), { timeout, interval: 200 })
      .toEqual({ state, card: prompt });
  }

  /** Whether the agent has said `line` and stopped speaking since, as a person hears the pause. */
  async function agentDoneSaying(page: Page, line: string): Promise<boolean> {
    const events = await pageEvents(page);
    let said = events.length - 1;
    while (said >= 0 && !(events[said]!.type === 'transcript' && events[said]!.role === 'agent' && String(events[said]!.text).includes(line))) said--;
    if (said < 0) return false;
    const after = events.slice(said).filter((e) => e.type === 'agent_started_speaking' || e.type === 'agent_stopped_speaking');
    return after.at(-1)?.type === 'agent_stopped_speaking';
  }
  /** Waits for the agent to finish `line`, then says `words`. */
  async function answer(page: Page, line: string, words: string): Promise<void> {
    try {
      await expect.poll(() => agentDoneSaying(page, line), { timeout: 30_000, interval: 200 }).toBe(true);
    } catch (error) {
      // What the page heard from the server, to tell a stalled voice from a missing event.
      const events = await pageEvents(page);
      console.info(`waiting for the agent to finish "${line}"; the page's events:\n${events.map((e) => `  ${e.type}${e.role ? ` ${e.role}` : ''}${e.text ? ` ${JSON.stringify(e.text)}` : ''}${e.decision ? ` ${e.decision}` : ''}`).join('\n')}`);
      throw error;
    }
    await say(page, words);
  }

  // The person listens to each reply to its end before answering: three replies of real-time
  // speech, 45 s in all at load average 13 (measured), hence the room.
  it('moves setup → playing → won by voice, showing state, card, transcript, tools and latency, with the agent audible', { timeout: 120_000 }, async () => {
    const page = await chromium.newPage();
    await useSpokenMic(page);
    await page.goto(`${rig.server.url}/test`);
    await signIn(page, rig.account.email, rig.account.password);
    await page.getByLabel('Flow').selectOption({ label: 'Guessing game' });
    await page.getByRole('button', { name: 'Connect' }).click();

    await expect.poll(() => text(page, '#status'), { timeout: 10_000 }).toBe('Connected · flow session');
    await seeState(page, 'setup', 'Ten questions: the host thinks of something, you have ten yes-or-no questions to guess it.', 5_000);
    await expect.poll(() => text(page, '#transcript'), { timeout: 5_000 }).toContain('Welcome to ten questions!');
    await screenshot(page, 'webrtc-test-page-connected');

    await answer(page, 'Welcome to ten questions!', "I'm ready");
    await seeState(page, 'playing', 'Ask yes-or-no questions, or name your guess. Questions asked: 0 of 10.', 20_000);
    await answer(page, 'Go ahead and ask your first question.', 'Is it an animal?');
    await seeState(page, 'playing', 'Ask yes-or-no questions, or name your guess. Questions asked: 1 of 10.', 20_000);
    await expect.poll(() => text(page, '#transcript'), { timeout: 5_000 }).toContain('Yes, it is an animal.');
    await screenshot(page, 'webrtc-test-page-mid-game');

    await answer(page, 'What is your next question?', 'Is it a cat?');
    await seeState(page, 'won', 'You got it: a cat! Found in 1 questions.', 20_000);
    await expect.poll(() => text(page, '#transcript'), { timeout: 10_000 }).toContain('You got it, it was a cat!');

    // What the person heard themselves say, in order, and what the agent did about it.
    const userLines = await page.locator('#transcript .line.user .text').allInnerTexts();
    expect(userLines).toEqual(["I'm ready", 'Is it an animal?', 'Is it a cat?']);
    const toolLog = await page.locator('#tool-calls li').allInnerTexts();
    expect(toolLog.map((line) => line.split('\n')[0])).toEqual(['accepted begin_game setup → playing', 'accepted record_answer playing → playing', 'accepted guess_correct playing → won']);
    expect(await text(page, '#variables')).toMatch(/secret_thing\s+a cat/);
    // Every turn reported its latency; spoken turns have an STT time. A turn's row comes with its
    // first audio frame, which follows its transcript by the voice's synthesis time (seconds for
    // flite on a loaded machine), so the table is waited for rather than read once.
    const latency = () => page.locator('#metrics tr').allInnerTexts();
    await expect.poll(async () => (await latency()).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(4);
    await expect.poll(async () => (await latency()).filter((row) => /^\d+\t\d+\t\d+\t/.test(row)).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);

    // The agent's voice reached the browser as real audio, not just packets of silence.
    const audio = await inboundAudio(page);
    expect(audio?.packetsReceived).toBeGreaterThan(100);
    // Energy is level² × seconds: digital silence gives 0; a second of speech gives ~0.1 or more.
    expect(audio?.totalAudioEnergy).toBeGreaterThan(0.1);
    // ...and the page's <audio> element is playing it.
    expect(await page.$eval('#agent-audio', (audio: any) => audio.srcObject !== null && !audio.paused)).toBe(true);
    await screenshot(page, 'webrtc-test-page-won');

    await page.getByRole('button', { name: 'Hang up' }).click();
    await expect.poll(() => text(page, '#status'), { timeout: 5_000 }).toBe('Ended · client ended');
    const events = await pageEvents(page);
    const sessionId = events.find((e) => e.type === 'session_started')?.session_id;
    const sessions = await rig.server.request('GET', '/v1/sessions', { jwt: rig.account.jwt });
    expect(sessions.body.find((s: { id: string }) => s.id === sessionId)).toMatchObject({ transport: 'webrtc', mode: 'flow', status: 'ended', end_reason: 'client_ended' });
    expect(chromium.pageErrors).toEqual([]);
  });

  it("shows the API's message in a banner when the offer is refused", { timeout: 60_000 }, async () => {
    const page = await chromium.newPage();
    const doomed = await createFlow(rig.server, rig.account.apiKey, 'Deleted meanwhile');
    await page.goto(`${rig.server.url}/test`);
    await signIn(page, rig.account.email, rig.account.password);
    await page.getByLabel('Flow').selectOption({ label: 'Deleted meanwhile' });
    expect((await rig.server.request('DELETE', `/v1/flows/${doomed}`, { apiKey: rig.account.apiKey })).status).toBeLessThan(300);
    await page.getByRole('button', { name: 'Connect' }).click();
    const banner = page.getByRole('alert');
    await banner.waitFor();
    expect(await banner.innerText()).toContain(`Could not connect: No flow with the id "${doomed}".`);
    expect(await text(page, '#status')).toBe('Not connected');
    expect(await page.getByRole('button', { name: 'Connect' }).isEnabled()).toBe(true);

    // A session token that was never issued is refused the same way.
    await page.getByLabel('Session token').fill('st_not_a_real_token');
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.getByRole('button', { name: 'Connect' }).click();
    await expect.poll(() => banner.innerText(), { timeout: 5_000 }).toContain('The session token is unknown, expired or already used.');
  });
});
