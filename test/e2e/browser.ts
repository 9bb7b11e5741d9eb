// Browser tests drive Debian's Chromium through playwright-core (no browser downloads
// here). The microphone is Chromium's fake capture device fed from a WAV file, which Chromium
// plays in a loop: a WAV is one utterance and a long silence, and the Deepgram fake's transcript
// queue says what each pass of the loop meant.
import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { padWithSilence, synthesizeSpeech, writeWav } from '../support/speech.ts';

/** Debian's full browser (package `chromium`): what the benches measure the studio in. */
export const CHROMIUM_PATH = '/usr/bin/chromium';
/**
 * Debian's headless build of the same Chromium (package `chromium-headless-shell`, the build
 * Playwright itself runs for headless tests): the same Blink, V8 and WebRTC without the
 * desktop browser around them. The tests run in it because the suite is CPU-bound on this
 * 2-core machine and the full browser's own processes cost as much as the pages: six studio
 * files took 51.9 s and 97 core-seconds in the full browser, 28.8 s and 52 in the shell (one run
 * each, quiet, 2026-11-25), all passing both ways.
 */
export const HEADLESS_SHELL_PATH = '/usr/lib/chromium/chromium-headless-shell';
/** Screenshots of what the tests saw; gitignored. */
export const ARTIFACTS_DIR = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/** Chromium's fake capture device records at 48 kHz. */
const MIC_RATE = 48_000;

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // The server listens on 127.0.0.1: ICE must be allowed to use loopback candidates.
  '--allow-loopback-in-peer-connection',
  // A page that was granted the microphone offers its real host addresses, not mDNS names (a
  // server cannot resolve those); the full browser treats the fake permission as granted, the
  // headless shell needs telling. Without it, the trickle tests never connect in the shell.
  '--disable-features=WebRtcHideLocalIpsWithMdns',
  '--use-fake-ui-for-media-stream',
  '--use-fake-device-for-media-stream',
];

export interface TestBrowser {
  browser: Browser;
  /** A fresh page (1280×800 unless told) that records the page's console errors, warnings and uncaught exceptions. */
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  /** Console errors and page exceptions seen so far, for failure messages. */
  pageErrors: string[];
  /** Console warnings seen so far (a clean studio prints none). */
  pageWarnings: string[];
  close(): Promise<void>;
}

/**
 * A 48 kHz WAV for the fake microphone: `text` spoken by flite after `leadMs` of silence and
 * before `tailMs` of it (the file loops, so the tail is the pause between passes). Without text,
 * only silence: a microphone that hears nothing.
 */
export async function writeMicWav(dir: string, text: string | null, options: { leadMs?: number; tailMs?: number } = {}): Promise<string> {
  const path = join(dir, 'mic.wav');
  const speech = text === null ? new Int16Array(0) : await synthesizeSpeech(text, { sampleRate: MIC_RATE });
  await writeWav(path, padWithSilence(speech, options.leadMs ?? 0, options.tailMs ?? 1_000, MIC_RATE), MIC_RATE);
  return path;
}

/**
 * Browsers already running in this process, by the bytes of their microphone's WAV. Launching
 * Chromium costs about 0.9 s of CPU (measured: launch, one page, close), and a test worker runs
 * a dozen browser files one after another (vitest.config.ts: isolate false), all with the same
 * silent microphone; so one Chromium serves them in turn. Each caller still gets contexts of its
 * own (a fresh profile per page: cookies, storage, cache) and closes only those.
 */
const running = new Map<string, { browser: Promise<Browser>; users: number; idle?: NodeJS.Timeout }>();
/** How long an unused browser waits for the next file of this worker before it quits. */
const IDLE_CLOSE_MS = 5_000;
/**
 * Where a shared browser's microphone plays from: the caller's WAV goes with its temp dir, so the
 * browser gets a copy named by its content. One folder for every run and worker, so nothing
 * piles up (a temp folder per worker was left behind by every run: the browser may outlive the
 * last file, so no test can remove it); a copy is written beside and renamed in, so a browser
 * never reads a half-written one.
 */
const MIC_DIR = join(tmpdir(), 'voxflow-e2e-mics');

async function micCopy(bytes: Buffer, hash: string): Promise<string> {
  await mkdir(MIC_DIR, { recursive: true });
  const path = join(MIC_DIR, `${hash.slice(0, 32)}.wav`);
  const partial = `${path}.${process.pid}.partial`;
  await writeFile(partial, bytes);
  await rename(partial, path);
  return path;
}

async function sharedBrowser(micWav: string, executablePath: string): Promise<{ browser: Browser; release(): Promise<void> }> {
  const bytes = await readFile(micWav);
  const hash = createHash('sha256').update(bytes).digest('hex');
  const key = `${executablePath} ${hash}`;
  let entry = running.get(key);
  if (!entry) {
    const launched = (async () => {
      const path = await micCopy(bytes, hash);
      const browser = await chromium.launch({
        executablePath,
        headless: true,
        args: [...CHROMIUM_ARGS, `--use-file-for-fake-audio-capture=${path}`],
      });
      browser.on('disconnected', () => {
        if (running.get(key)?.browser === launched) running.delete(key);
      });
      return browser;
    })();
    entry = { browser: launched, users: 0 };
    running.set(key, entry);
    launched.catch(() => running.delete(key));
  }
  const mine = entry;
  clearTimeout(mine.idle);
  mine.users++;
  const browser = await mine.browser;
  return {
    browser,
    async release() {
      if (--mine.users > 0) return;
      // Outside a test worker (a bench, `npm run screenshot`) no next file comes: close it now. Left
      // to the idle timer, the script's exit would kill it, and a killed full Chromium leaves its
      // singleton folder (/tmp/org.chromium.Chromium.*) behind; closed, it removes it.
      if (!process.env.VITEST_WORKER_ID) {
        running.delete(key);
        await browser.close();
        return;
      }
      // Kept for the worker's next file; closed once unused for IDLE_CLOSE_MS. A test worker that
      // vitest stops sooner takes it down with it (Playwright closes its browsers on SIGTERM; the
      // headless shell the tests run keeps no singleton folder).
      mine.idle = setTimeout(() => {
        if (mine.users > 0) return;
        running.delete(key);
        void browser.close();
      }, IDLE_CLOSE_MS).unref();
    },
  };
}

/**
 * Debian's Chromium with a fake microphone that plays `micWav` in a loop: this process's running
 * one for the same WAV when there is one (sharedBrowser), else a new one. close() closes what this
 * caller opened. The headless shell unless `full` (the benches, whose figures are the full
 * browser's).
 */
export async function launchChromium(options: { micWav: string; full?: boolean }): Promise<TestBrowser> {
  const executablePath = options.full ? CHROMIUM_PATH : HEADLESS_SHELL_PATH;
  if (!existsSync(executablePath)) {
    const pkg = options.full ? 'chromium' : 'chromium-headless-shell';
    throw new Error(`Debian's ${pkg} is required: apt-get install ${pkg} (${executablePath} is missing)`);
  }
  const { browser, release } = await sharedBrowser(options.micWav, executablePath);
  const contexts = new Set<BrowserContext>();
  const pageErrors: string[] = [];
  const pageWarnings: string[] = [];
  return {
    browser,
    pageErrors,
    pageWarnings,
    async newPage(viewport = { width: 1280, height: 800 }) {
      // Tests ask for reduced motion, which the studio honours: its endless animations (a live
      // state's ring, the path's flowing dashes, the live dots, skeletons) draw a frame every
      // vsync for as long as a page waits, in the renderer and the GPU process, and no test looks
      // at them moving (docs/testing.md, "Where the suite's CPU goes"). The benches keep the
      // motion their figures were taken with.
      const context = await browser.newContext({ viewport, reducedMotion: process.env.VITEST_WORKER_ID ? 'reduce' : 'no-preference' });
      contexts.add(context);
      context.on('close', () => contexts.delete(context));
      const page = await context.newPage();
      page.on('console', (message) => {
        if (message.type() === 'error') pageErrors.push(`console: ${message.text()}`);
        if (message.type() === 'warning') pageWarnings.push(`console: ${message.text()}`);
      });
      page.on('pageerror', (error) => pageErrors.push(`exception: ${error.message}`));
      return page;
    },
    async close() {
      await Promise.all([...contexts].map((context) => context.close().catch(() => {})));
      await release();
    },
  };
}

/** A temporary directory for a test's WAV files, removed by the returned function. */
export async function tempDir(): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'voxflow-e2e-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** Saves a screenshot of the page under test-artifacts/. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path });
  return path;
}

/** Signs in on the /test page the way a person does: email, password, the Sign in button. */
export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText(`Signed in as ${email}`).waitFor();
}

/** The events the /test page received on its data channel (the page keeps them on window.voxflow). */
export function pageEvents(page: Page): Promise<Array<Record<string, any>>> {
  return page.evaluate(() => (globalThis as any).voxflow.events);
}

/**
 * A microphone the test speaks into when it chooses, as a person talks once they hear the call is
 * up. Chromium's fake capture device (micWav) plays its file from the moment getUserMedia opens
 * it; measured on a loaded machine, the call connected 1–9 s after that, so a fixed lead put the
 * words before the call existed (lost) or over the greeting the agent was still preparing (which
 * then never played, rightly: the caller talked over it). Call before the page loads: the page's
 * getUserMedia({audio}) then gets a WebAudio stream that is silent until `say`.
 */
export async function useSpokenMic(page: Page): Promise<void> {
  await page.addInitScript(() => {
    // Runs in the page (no DOM types in this tsconfig, as elsewhere in the e2e tests).
    const page = globalThis as any;
    const devices = page.navigator.mediaDevices;
    const original = devices.getUserMedia.bind(devices);
    let context: any = null;
    let destination: any = null;
    const open = () => {
      if (!context) {
        // Created inside the page's click handler (Talk, Connect), so it may play.
        context = new page.AudioContext({ sampleRate: 48_000 });
        destination = context.createMediaStreamDestination();
        // A source that never ends keeps the stream flowing between utterances, as a microphone
        // does: with nothing playing, Chromium's destination sent no audio at all.
        const hush = context.createConstantSource();
        hush.offset.value = 0;
        hush.connect(destination);
        hush.start();
      }
      void context.resume();
      return { context, destination };
    };
    page.voxflowTestMic = {
      async say(pcmBase64: string, sampleRate: number): Promise<void> {
        const { context: ctx, destination: out } = open();
        const bytes = Uint8Array.from(page.atob(pcmBase64) as string, (c) => c.charCodeAt(0));
        const pcm = new Int16Array(bytes.buffer);
        const buffer = ctx.createBuffer(1, pcm.length, sampleRate);
        const channel = buffer.getChannelData(0);
        for (let i = 0; i < pcm.length; i++) channel[i] = pcm[i]! / 32_768;
        const source = ctx.createBufferSource();
        source.buffer = buffer;
        source.connect(out);
        await ctx.resume();
        await new Promise<void>((resolve) => {
          source.onended = () => resolve();
          source.start();
        });
      },
    };
    devices.getUserMedia = async (constraints: { audio?: unknown; video?: unknown } | undefined) =>
      constraints?.audio && !constraints.video ? open().destination.stream : original(constraints);
  });
}

/** Speaks `text` (flite's voice) into the page's microphone from useSpokenMic; resolves when it has been played. */
export async function say(page: Page, text: string): Promise<void> {
  const speech = await synthesizeSpeech(text, { sampleRate: MIC_RATE });
  const pcm = Buffer.from(speech.buffer, speech.byteOffset, speech.byteLength).toString('base64');
  await page.evaluate(([data, rate]) => (globalThis as any).voxflowTestMic.say(data, rate), [pcm, MIC_RATE] as const);
}

/** Inbound audio of the page's peer connection, from RTCPeerConnection.getStats(). */
export function inboundAudio(page: Page): Promise<{ packetsReceived: number; totalAudioEnergy: number; audioLevel: number } | null> {
  return page.evaluate(async () => {
    const pc = (globalThis as any).voxflow.pc;
    if (!pc) return null;
    let found: { packetsReceived: number; totalAudioEnergy: number; audioLevel: number } | null = null;
    (await pc.getStats()).forEach((s: any) => {
      if (s.type === 'inbound-rtp' && s.kind === 'audio') found = { packetsReceived: s.packetsReceived ?? 0, totalAudioEnergy: s.totalAudioEnergy ?? 0, audioLevel: s.audioLevel ?? 0 };
    });
    return found;
  });
}
