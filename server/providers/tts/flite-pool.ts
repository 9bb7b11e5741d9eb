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
import { availableParallelism } from 'node:os';
import { ProviderError } from '../types.ts';
import { FliteWorkerHost, type FliteAudio, type FliteWorkerHostOptions } from './flite-worker-host.ts';

/** Where sentences are synthesized: one worker host, or a pool of them. */
export interface FliteRunner {
  run(text: string, voice: string, signal: AbortSignal, awaited: boolean): Promise<FliteAudio>;
  warmUp(): Promise<void>;
  close(): Promise<void>;
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
