// An optional end-of-turn model (`--turn-model PATH`, VOXFLOW_TURN_MODEL): an ONNX file with
// Smart Turn v3's input and output, asked how likely it is that the caller has finished, from
// their last 8 s of speech. docs/providers.md says where the real model comes from and what a
// turn costs.
//
// The features (Whisper's log-mel spectrogram, ~150 ms of arithmetic for 8 s) and the run (ORT's
// run() is synchronous native work) both happen on a worker thread of the model's own
// (turn-model-worker.mjs), never on the thread that paces every call's audio.
//
// The end-of-turn decision (spoken-turns.ts) asks it at a caller's pause whose words say neither
// "unfinished" nor "a whole short answer" (docs/flows.md#turn-taking).
import { Worker } from 'node:worker_threads';
import { stopWorkerGracefully } from '../providers/turn/worker-shutdown.ts';

/** What the end-of-turn decision asks: is the caller done, judging by how their speech ends? */
export interface EndOfTurnModel {
  /**
   * The probability (0 to 1) that the caller's turn is complete, from their speech so far as
   * 16 kHz PCM16 (only the last 8 s count). Rejects with TurnModelError when the run fails.
   */
  endOfTurnProbability(pcm: Int16Array): Promise<number>;
  /** Stops the worker; pending questions are rejected. */
  close(): Promise<void>;
}

/** The model cannot be loaded (missing, not ONNX, not Smart Turn v3's shape) or a run failed. */
export class TurnModelError extends Error {
  override name = 'TurnModelError';
}

type WorkerMessage =
  | { type: 'ready'; inputName: string; outputName: string }
  | { type: 'failed'; message: string }
  | { type: 'result'; id: number; probability: number }
  | { type: 'error'; id: number; message: string };

/**
 * Starts the worker and loads `modelPath` in it, with one run on silence to prove its shapes;
 * rejects with a TurnModelError that names the file and what is wrong with it.
 */
export function loadTurnModel(modelPath: string): Promise<EndOfTurnModel> {
  // As for Silero (providers/turn/silero.ts): onnxruntime's telemetry stays off unless the
  // operator turned it on; the library reads it from the process environment.
  process.env.ORT_DISABLE_TELEMETRY ??= '1';
  const worker = new Worker(new URL('./turn-model-worker.mjs', import.meta.url), {
    workerData: { role: 'voxflow-turn-model', modelPath },
    execArgv: [],
  });
  const pending = new Map<number, { resolve(p: number): void; reject(e: unknown): void }>();
  let nextId = 0;
  let gone: TurnModelError | null = null;

  const failAll = (error: TurnModelError) => {
    gone ??= error;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };

  return new Promise<EndOfTurnModel>((resolve, reject) => {
    let ready = false;
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready') {
        ready = true;
        // An idle model must not keep the process alive; questions in flight ref it.
        worker.unref();
        resolve(model);
      } else if (message.type === 'failed') {
        reject(new TurnModelError(`cannot load the end-of-turn model at ${modelPath}: ${message.message}`));
        void worker.terminate();
      } else {
        const waiter = pending.get(message.id);
        if (!waiter) return;
        pending.delete(message.id);
        if (pending.size === 0) worker.unref();
        if (message.type === 'result') waiter.resolve(message.probability);
        else waiter.reject(new TurnModelError(`the end-of-turn model failed: ${message.message}`));
      }
    });
    worker.on('error', (error) => {
      const lost = new TurnModelError(`the end-of-turn model's worker crashed: ${error.message}`);
      if (!ready) reject(new TurnModelError(`cannot load the end-of-turn model at ${modelPath}: ${error.message}`));
      failAll(lost);
    });
    worker.on('exit', (code) => {
      if (!ready) reject(new TurnModelError(`cannot load the end-of-turn model at ${modelPath}: its worker exited (code ${code})`));
      failAll(new TurnModelError(`the end-of-turn model was stopped`));
    });

    const model: EndOfTurnModel = {
      endOfTurnProbability(pcm) {
        if (gone) return Promise.reject(gone);
        return new Promise<number>((resolveRun, rejectRun) => {
          const id = ++nextId;
          pending.set(id, { resolve: resolveRun, reject: rejectRun });
          worker.ref();
          // A copy: the caller keeps its buffer, and only the last 8 s travel.
          worker.postMessage({ type: 'infer', id, pcm: pcm.slice(Math.max(0, pcm.length - TURN_MODEL_SAMPLES)) });
        });
      },
      async close() {
        failAll(new TurnModelError('the end-of-turn model was stopped'));
        // Not terminate(): with a run in flight that aborts the process (providers/turn/worker-shutdown.ts).
        await stopWorkerGracefully(worker);
      },
    };
  });
}

/** Audio the model looks at: the last 8 s at 16 kHz. */
export const TURN_MODEL_SAMPLES = 8 * 16_000;
