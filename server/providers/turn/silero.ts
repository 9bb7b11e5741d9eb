// Silero VAD v5 on onnxruntime-node (CPU), run on a worker thread of its own (silero-worker.mjs):
// one worker per model file serves every session in the process, batching the next frame of
// every detector into one inference. Each detector's recurrent state lives in the worker.
//
// Why a worker: ORT's run() is synchronous native work (~125 µs per frame alone, less batched).
// On the main thread, frames of many callers arriving together stalled the event loop for tens
// of milliseconds and delayed every session's outgoing audio. Loading (import ~185 ms, session
// ~115 ms, both synchronous) also moves off the main thread.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { stopWorkerGracefully } from './worker-shutdown.ts';
import { ENGINE_SAMPLE_RATE, ProviderError } from '../types.ts';
import type { VoiceActivityDetector, VoiceActivityModel } from '../types.ts';

export const SILERO_FRAME_SAMPLES = 512;
/** v5 expects the last 64 samples of the previous frame in front of each frame. */
const CONTEXT_SAMPLES = 64;
const INPUT_SAMPLES = CONTEXT_SAMPLES + SILERO_FRAME_SAMPLES;
/** How long frames gather before they are posted to the worker together. */
const FLUSH_MS = 8;

export interface SileroOptions {
  /** The .onnx file; defaults to the v5 model inside @ricky0123/vad-web (Electron passes its own). */
  modelPath?: string;
}

export interface SileroVoiceActivityModel extends VoiceActivityModel {
  /** Loads the runtime and the model now (idempotent); rejects with ProviderError if it cannot. */
  load(): Promise<void>;
}

const hosts = new Map<string, SileroWorkerHost>();

export function defaultSileroModelPath(): string {
  return createRequire(import.meta.url).resolve('@ricky0123/vad-web/dist/silero_vad_v5.onnx');
}

export function createSileroVad(options: SileroOptions = {}): SileroVoiceActivityModel {
  let modelPath: string | undefined = options.modelPath;
  const host = () => hostFor((modelPath ??= defaultSileroModelPath()));
  return {
    provider: 'silero',
    frameSamples: SILERO_FRAME_SAMPLES,
    load: () => host().load(),
    createDetector: () => new SileroDetector(host()),
  };
}

/** Stops the shared workers (tests and process shutdown); the next detector starts afresh. */
export async function releaseSileroModels(): Promise<void> {
  const stopping = [...hosts.values()];
  hosts.clear();
  await Promise.all(stopping.map((host) => host.close()));
}

function hostFor(path: string): SileroWorkerHost {
  let host = hosts.get(path);
  if (!host) {
    host = new SileroWorkerHost(path);
    hosts.set(path, host);
  }
  return host;
}

type WorkerMessage =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'results'; seqs: Int32Array; probabilities: Float32Array }
  | { type: 'error'; seqs: Int32Array; message: string };

interface PendingFrame {
  det: number;
  seq: number;
  fresh: boolean;
  input: Float32Array;
  resolve(probability: number): void;
  reject(error: unknown): void;
}

/** The worker for one model file: starts on first use, restarts after a crash. */
class SileroWorkerHost {
  private worker: Worker | null = null;
  private ready: Promise<void> | null = null;
  private nextDetector = 0;
  private nextSeq = 0;
  /** Frames sent and not answered, by sequence number. */
  private readonly inFlight = new Map<number, PendingFrame>();
  /** Frames gathered for the next message to the worker. */
  private outbox: PendingFrame[] = [];
  /** Detectors closed this tick: told after their last frames, so the worker frees them. */
  private closing: number[] = [];
  private flushScheduled = false;

  constructor(private readonly modelPath: string) {}

  newDetectorId(): number {
    return ++this.nextDetector;
  }

  load(): Promise<void> {
    this.start();
    return this.ready!;
  }

  infer(det: number, input: Float32Array, fresh: boolean): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.outbox.push({ det, seq: ++this.nextSeq, fresh, input, resolve, reject });
      this.scheduleFlush();
    });
  }

  closeDetector(det: number): void {
    if (!this.worker) return;
    this.closing.push(det);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // Frames wait up to FLUSH_MS to travel together: WebRTC delivers each caller's audio packet
    // by packet, and a message per frame showed in profiles (postMessage was 3% of the main
    // thread's samples with five WebRTC callers). A few ms is nothing next to the hundreds of ms
    // a turn decision waits anyway.
    setTimeout(() => this.flush(), FLUSH_MS);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.stopped(worker, new ProviderError('silero', 'server', 'Silero was shut down', false));
    // Not terminate(): with a run in flight that aborts the process (worker-shutdown.ts).
    await stopWorkerGracefully(worker);
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    // onnxruntime 1.30's Linux build has telemetry on by default: at load it reads the machine's
    // CPU and OS names and a device id, queues events for Microsoft's collector, and writes
    // `.ses` and `mat-debug-<pid>.log` in the temp folder. A voice server that keeps callers'
    // audio on the operator's machine sends nothing anywhere it was not told to. The library
    // reads the variable from the process environment (getenv), so it is set here, on the main
    // thread, before the worker loads it; an operator's own setting is kept.
    process.env.ORT_DISABLE_TELEMETRY ??= '1';
    const worker = new Worker(new URL('./silero-worker.mjs', import.meta.url), {
      workerData: { modelPath: this.modelPath, sampleRate: ENGINE_SAMPLE_RATE },
      // Plain JS: it needs none of the parent's loader flags (tsx).
      execArgv: [],
    });
    // An idle VAD must not keep the process alive; frames in flight ref it (flush/settle).
    worker.unref();
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: WorkerMessage) => {
        if (message.type === 'ready') resolve();
        else if (message.type === 'failed') {
          const error = new ProviderError('silero', 'bad_request', `cannot load the Silero model at ${this.modelPath}: ${message.message}`, false);
          reject(error);
          this.stopped(worker, error);
        } else this.answered(message);
      });
      const crashed = (reason: string, cause?: unknown) => {
        const error = new ProviderError('silero', 'server', `the Silero worker ${reason}`, true, { cause });
        reject(error);
        this.stopped(worker, error);
      };
      worker.on('error', (error) => crashed(`crashed: ${error.message}`, error));
      worker.on('exit', (code) => crashed(`exited with code ${code}`));
    });
    this.ready.catch(() => {}); // reported to the frames waiting, and to load() callers
    return worker;
  }

  private flush(): void {
    this.flushScheduled = false;
    const frames = this.outbox;
    const closing = this.closing;
    this.outbox = [];
    this.closing = [];
    if (frames.length > 0) this.postFrames(frames);
    for (const det of closing) this.worker?.postMessage({ type: 'close', det });
  }

  private postFrames(frames: PendingFrame[]): void {
    const worker = this.start();
    const input = new Float32Array(frames.length * INPUT_SAMPLES);
    frames.forEach((frame, i) => {
      input.set(frame.input, i * INPUT_SAMPLES);
      this.inFlight.set(frame.seq, frame);
    });
    worker.ref();
    worker.postMessage({ type: 'frames', frames: frames.map(({ det, seq, fresh }) => ({ det, seq, fresh })), input }, [input.buffer]);
  }

  private answered(message: Extract<WorkerMessage, { type: 'results' | 'error' }>): void {
    message.seqs.forEach((seq, i) => {
      const frame = this.inFlight.get(seq);
      if (!frame) return;
      this.inFlight.delete(seq);
      if (message.type === 'results') frame.resolve(message.probabilities[i]!);
      else frame.reject(new ProviderError('silero', 'server', `Silero inference failed: ${message.message}`, false));
    });
    if (this.inFlight.size === 0) this.worker?.unref();
  }

  /** The worker is gone: fail every frame it owed, forget it (the next frame starts a new one). */
  private stopped(worker: Worker, error: ProviderError): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.ready = null;
    const owed = [...this.inFlight.values(), ...this.outbox];
    this.inFlight.clear();
    this.outbox = [];
    for (const frame of owed) frame.reject(error);
  }
}

class SileroDetector implements VoiceActivityDetector {
  private readonly id: number;
  private readonly context = new Float32Array(CONTEXT_SAMPLES);
  /** The next frame starts from a zero state (first frame, or after reset()). */
  private fresh = true;
  private closed = false;

  constructor(private readonly host: SileroWorkerHost) {
    this.id = host.newDetectorId();
  }

  probability(frame: Float32Array): Promise<number> {
    if (this.closed) return Promise.reject(new Error('the Silero detector is closed'));
    if (frame.length !== SILERO_FRAME_SAMPLES) {
      return Promise.reject(new RangeError(`Silero takes frames of ${SILERO_FRAME_SAMPLES} samples, got ${frame.length}`));
    }
    // The input is assembled now, in call order, so the caller may reuse `frame` at once. The
    // worker runs a detector's frames in the order they were sent.
    const input = new Float32Array(INPUT_SAMPLES);
    input.set(this.context);
    input.set(frame, CONTEXT_SAMPLES);
    this.context.set(frame.subarray(SILERO_FRAME_SAMPLES - CONTEXT_SAMPLES));
    const fresh = this.fresh;
    this.fresh = false;
    return this.host.infer(this.id, input, fresh);
  }

  reset(): void {
    this.fresh = true;
    this.context.fill(0);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.reset();
    this.host.closeDetector(this.id);
  }
}
