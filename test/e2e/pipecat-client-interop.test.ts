// Pipecat's own web client (client-js + SmallWebRTCTransport) connects to our /offer in Debian
// Chromium and holds a conversation: its microphone is heard (the flow moves on what it says)
// and the agent's voice plays back in the page. The client is bundled with esbuild and served
// on the server's origin through Playwright's request routing; nothing of it enters the product.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { GUESSING_GAME_RULES, startVoiceRig, type VoiceRig } from '../support/voice-server.ts';
import { padWithSilence, synthesizeSpeech, writeWav } from '../support/speech.ts';
import { HEADLESS_SHELL_PATH } from './browser.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PAGE = `<!doctype html><meta charset="utf-8"><title>pipecat interop</title>
<script type="module">
  import { PipecatClient, SmallWebRTCTransport, WavMediaManager } from '/pipecat-interop/pipecat.js';
  const state = (window.interop = { ready: false, error: null, states: [], maxRms: 0 });
  const client = new PipecatClient({
    // The default media manager fetches Daily's script from the internet; this one needs none.
    transport: new SmallWebRTCTransport({ mediaManager: new WavMediaManager() }),
    enableMic: true,
    enableCam: false,
    callbacks: {
      onTransportStateChanged: (s) => state.states.push(s),
      onError: (e) => (state.error = String(e?.data?.message ?? e)),
      onTrackStarted: (track, participant) => {
        if (participant?.local || track.kind !== 'audio') return;
        const stream = new MediaStream([track]);
        const audio = new Audio();
        audio.srcObject = stream;
        audio.play().catch(() => {});
        const context = new AudioContext();
        const analyser = context.createAnalyser();
        context.createMediaStreamSource(stream).connect(analyser);
        const samples = new Float32Array(analyser.fftSize);
        setInterval(() => {
          analyser.getFloatTimeDomainData(samples);
          let sum = 0;
          for (const v of samples) sum += v * v;
          state.maxRms = Math.max(state.maxRms, Math.sqrt(sum / samples.length));
        }, 50);
      },
    },
  });
  const params = new URLSearchParams(location.search);
  client
    .connect({ webrtcRequestParams: { endpoint: params.get('endpoint'), headers: new Headers({ Authorization: 'Bearer ' + params.get('jwt') }) } })
    .then(() => (state.ready = true), (e) => (state.error = String(e?.message ?? e)));
</script>`;

describe("Pipecat's web client against /offer", () => {
  let rig: VoiceRig;
  let browser: Browser;
  let bundle: string;
  let wav: string | undefined;

  beforeAll(async () => {
    if (!existsSync(HEADLESS_SHELL_PATH)) throw new Error(`Debian's chromium-headless-shell is required: apt-get install chromium-headless-shell (${HEADLESS_SHELL_PATH} is missing)`);
    const built = await build({
      stdin: {
        contents: "export { PipecatClient } from '@pipecat-ai/client-js'; export { SmallWebRTCTransport, WavMediaManager } from '@pipecat-ai/small-webrtc-transport';",
        resolveDir: ROOT,
      },
      bundle: true,
      format: 'esm',
      platform: 'browser',
      write: false,
      logLevel: 'silent',
    });
    bundle = built.outputFiles[0]!.text;
    rig = await startVoiceRig({ rules: GUESSING_GAME_RULES, transcripts: ["I'm ready", 'Is it an animal?'] });
    wav = join(mkdtempSync(join(tmpdir(), 'voxflow-pipecat-')), 'mic.wav');
    await writeWav(wav, padWithSilence(await synthesizeSpeech("I'm ready", { sampleRate: 48_000 }), 2500, 6000, 48_000), 48_000);
    browser = await chromium.launch({
      executablePath: HEADLESS_SHELL_PATH,
      args: [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--allow-loopback-in-peer-connection', '--disable-features=WebRtcHideLocalIpsWithMdns', '--use-fake-ui-for-media-stream',
        '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${wav}`, '--autoplay-policy=no-user-gesture-required',
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await rig?.close();
    if (wav) await rm(dirname(wav), { recursive: true, force: true });
  });

  it('connects, reaches bot-ready, is heard, and plays the agent back', { timeout: 60_000 }, async () => {
    const page = await browser.newPage();
    if (process.env.VOXFLOW_DEBUG_E2E) {
      page.on('console', (m) => console.log('page:', m.text().slice(0, 300)));
      page.on('response', (r) => console.log('page: response', r.request().method(), r.url().slice(0, 80), r.status()));
      page.on('requestfailed', (r) => console.log('page: failed', r.method(), r.url().slice(0, 80), r.failure()?.errorText));
      page.on('pageerror', (e) => console.log('page: error', e.message));
    }
    await page.route(`${rig.server.url}/pipecat-interop/**`, (route) => {
      const isBundle = route.request().url().includes('pipecat.js');
      return route.fulfill({ status: 200, contentType: isBundle ? 'text/javascript' : 'text/html', body: isBundle ? bundle : PAGE });
    });
    const endpoint = `/offer?mode=flow&program_id=${rig.flowId}`;
    await page.goto(`${rig.server.url}/pipecat-interop/index.html?endpoint=${encodeURIComponent(endpoint)}&jwt=${rig.account.jwt}`);

    await page
      .waitForFunction(() => (globalThis as any).interop.ready || (globalThis as any).interop.error, undefined, { timeout: 30_000, polling: 100 })
      .catch(async (error: unknown) => {
        throw new Error(`connect() did not settle: ${JSON.stringify(await page.evaluate(() => (globalThis as any).interop))}; ${String(error)}`);
      });
    const afterConnect = await page.evaluate(() => (globalThis as any).interop);
    expect(afterConnect.error).toBeNull();
    expect(afterConnect.states).toContain('ready');

    // The client's microphone reached the engine: "I'm ready" moved the flow to playing, whose
    // tools the model is offered next.
    await expect
      .poll(() => rig.openai.requests.some((r) => JSON.stringify((r.body as { tools?: unknown })?.tools ?? []).includes('record_answer')), { timeout: 30_000, interval: 250 })
      .toBe(true);
    // The agent's voice played in the page.
    await expect.poll(async () => (await page.evaluate(() => (globalThis as any).interop.maxRms)) as number, { timeout: 15_000, interval: 250 }).toBeGreaterThan(0.01);

    const sessions = await rig.server.request('GET', '/v1/sessions', { jwt: rig.account.jwt });
    expect(sessions.body[0]).toMatchObject({ transport: 'webrtc', flow_id: rig.flowId, status: 'connected' });
    await page.close();
  });
});
