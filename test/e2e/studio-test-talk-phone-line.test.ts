// The Talk panel's "Phone line (8 kHz)" switch: with it on, the browser's audio goes through the
// 8 kHz G.711 μ-law a phone call uses, both ways. What the designer hears shows it: the agent's
// voice, as the page receives it, has (almost) no energy above the line's 4 kHz edge, where the
// same greeting without the line has some; and a spoken turn still gets through to the agent.
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUESSING_GAME_RULES, startVoiceRig, type VoiceRig } from '../support/voice-server.ts';
import { launchChromium, say, tempDir, useSpokenMic, writeMicWav, type TestBrowser } from './browser.ts';
import { signInBrowser } from './studio.ts';

interface Bands {
  /** Per frame that carried voice: the power of the speech band (300–3400 Hz). */
  speech: number[];
  /** Per frame, the power above the phone line's edge (4.5–7.5 kHz). */
  above: number[];
}

/**
 * The power above the line's edge relative to the speech band's, summed over the voiced frames
 * but for the tenth with the most above the edge: on a busy machine the page's audio sometimes
 * glitches, and a click is loud at every frequency, the line's or not. A tenth of the frames is
 * far more than the clicks and far less than the fricatives that give wideband speech its edge.
 */
function edgeRatio(bands: Bands, keep = 0.9): number {
  const frames = bands.speech.map((speech, i) => ({ speech, above: bands.above[i]! }));
  frames.sort((a, b) => a.above / a.speech - b.above / b.speech);
  const kept = frames.slice(0, Math.ceil(frames.length * keep));
  return kept.reduce((sum, f) => sum + f.above, 0) / kept.reduce((sum, f) => sum + f.speech, 0);
}

/**
 * Starts measuring the agent's voice as the page plays it (the panel's <audio> element's stream,
 * through a WebAudio analyser): every ~20 ms, the power in the speech band and above 4 kHz, kept
 * for the frames loud enough to be speech.
 */
async function listenToAgent(panel: Locator): Promise<void> {
  const audio = panel.getByTestId('talk-agent-audio');
  await expect.poll(() => audio.evaluate((el: any) => el.srcObject !== null), { timeout: 20_000 }).toBe(true);
  await audio.evaluate(async (el: any) => {
    const page = globalThis as any;
    const context = new page.AudioContext({ sampleRate: 48_000 });
    await context.resume();
    const analyser = context.createAnalyser();
    analyser.fftSize = 2048;
    analyser.smoothingTimeConstant = 0;
    context.createMediaStreamSource(el.srcObject).connect(analyser);
    const bins = new Float32Array(analyser.frequencyBinCount);
    const hzPerBin = context.sampleRate / analyser.fftSize;
    const bands = { speech: [] as number[], above: [] as number[] };
    const timer = setInterval(() => {
      analyser.getFloatFrequencyData(bins);
      let speech = 0;
      let above = 0;
      bins.forEach((db, i) => {
        const power = 10 ** (db / 10);
        const hz = i * hzPerBin;
        if (hz >= 300 && hz < 3_400) speech += power;
        else if (hz >= 4_500 && hz < 7_500) above += power;
      });
      // Silence between words says nothing about the line.
      if (speech > 1e-5) {
        bands.speech.push(speech);
        bands.above.push(above);
      }
    }, 20);
    page.agentBands = { bands, stop: () => (clearInterval(timer), void context.close()) };
  });
}

function heardBands(page: Page): Promise<Bands> {
  return page.evaluate(() => {
    const { bands, stop } = (globalThis as any).agentBands;
    stop();
    return { speech: [...bands.speech], above: [...bands.above] };
  });
}

describe('test-talk over a phone line', () => {
  let chromium: TestBrowser;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let rig: VoiceRig;

  beforeAll(async () => {
    dir = await tempDir();
    [chromium, rig] = await Promise.all([
      writeMicWav(dir.path, null).then((wav) => launchChromium({ micWav: wav })),
      // The embedded voice (flite, 16 kHz): a real voice, with energy up to 8 kHz.
      startVoiceRig({ rules: GUESSING_GAME_RULES, transcripts: ["I'm ready"] }),
    ]);
  }, 60_000);
  afterAll(async () => {
    await chromium?.close();
    await rig?.close();
    await dir?.remove();
  });

  it('sounds like a call with the switch on, and not with it off; a spoken turn still gets through', { timeout: 120_000 }, async () => {
    const page = await chromium.newPage();
    await useSpokenMic(page);
    await signInBrowser(page, rig.server.url, rig.account);
    await page.goto(`${rig.server.url}/flow-editor?flow=${encodeURIComponent(rig.flowId)}`);
    await page.getByRole('tab', { name: 'Talk', exact: true }).click();
    const panel = page.getByRole('region', { name: 'Test talk' });
    const status = () => panel.getByTestId('talk-status').innerText();
    const activity = () => panel.locator('.activity').innerText();
    const lineSwitch = panel.getByRole('switch', { name: 'Phone line (8 kHz)' });
    expect(await lineSwitch.isChecked()).toBe(false);

    /** Talk, hear the greeting out, and say what it sounded like. */
    const greeting = async (): Promise<Bands> => {
      await panel.getByRole('button', { name: /^Talk( again)?$/ }).click();
      await expect.poll(status, { timeout: 20_000 }).toMatch(/^Live\b/);
      await listenToAgent(panel);
      await expect.poll(activity, { timeout: 30_000, interval: 100 }).toBe('Agent speaking');
      await expect.poll(activity, { timeout: 30_000, interval: 200 }).not.toBe('Agent speaking');
      return heardBands(page);
    };

    await lineSwitch.check();
    const onLine = await greeting();
    expect(await panel.getByTestId('talk-phone-line').innerText()).toContain('phone line');
    // The switch holds for the session: it is changed between sessions, not during one.
    expect(await lineSwitch.isDisabled()).toBe(true);
    // The caller's voice goes through the line too, and the agent still understands it.
    await say(page, "I'm ready");
    await expect.poll(() => panel.getByTestId('talk-state-name').innerText(), { timeout: 30_000 }).toBe('playing');
    await expect.poll(() => panel.getByRole('log').innerText(), { timeout: 20_000 }).toContain('Go ahead and ask your first question.');
    await panel.getByRole('button', { name: 'End', exact: true }).click();
    await expect.poll(status, { timeout: 10_000 }).toBe('Ended');

    await lineSwitch.uncheck();
    const wide = await greeting();
    expect(await panel.getByTestId('talk-phone-line').count()).toBe(0);
    await panel.getByRole('button', { name: 'End', exact: true }).click();
    await expect.poll(status, { timeout: 10_000 }).toBe('Ended');

    const onLineRatio = edgeRatio(onLine);
    const wideRatio = edgeRatio(wide);
    console.info(`agent voice above 4.5 kHz, relative to 300–3400 Hz: phone line ${onLineRatio.toExponential(2)} (${onLine.speech.length} frames), wideband ${wideRatio.toExponential(2)} (${wide.speech.length} frames); every frame kept: ${edgeRatio(onLine, 1).toExponential(2)}, ${edgeRatio(wide, 1).toExponential(2)}`);
    expect(onLine.speech.length).toBeGreaterThan(20);
    expect(wide.speech.length).toBeGreaterThan(20);
    // Without the line, the voice's fricatives reach well above 4 kHz; through it, next to nothing does.
    expect(wideRatio).toBeGreaterThan(3e-4);
    expect(onLineRatio).toBeLessThan(wideRatio / 20);

    const sessions = (await rig.server.request('GET', '/v1/sessions', { jwt: rig.account.jwt })).body;
    expect(sessions.slice(0, 2).map((s: { transport: string }) => s.transport)).toEqual(['webrtc', 'webrtc']);
    expect(chromium.pageErrors).toEqual([]);
    await page.close();
  });
});
