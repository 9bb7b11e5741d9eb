// Silero VAD v5 on onnxruntime-node (CPU). One InferenceSession per model file serves every
// session in the process; each detector keeps its own recurrent state and audio context.
//
// Costs measured on this machine: importing onnxruntime-node ~185 ms and creating the session
// ~115 ms, both synchronous native work that stalls the event loop once, so the server should
// call `load()` at start-up rather than on the first caller's audio. Then ~125 µs per 32 ms frame.
// ORT's `run` is synchronous native code deferred to a setImmediate, so a frame never blocks
// for longer than that.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import { ENGINE_SAMPLE_RATE, ProviderError } from '../types.ts';
import type { VoiceActivityDetector, VoiceActivityModel } from '../types.ts';

export const SILERO_FRAME_SAMPLES = 512;
/** v5 expects the last 64 samples of the previous frame in front of each frame. */
const CONTEXT_SAMPLES = 64;
const STATE_SIZE = 2 * 1 * 128;

export interface SileroOptions {
  /** The .onnx file; defaults to the v5 model inside @ricky0123/vad-web (Electron passes its own). */
  modelPath?: string;
}

export interface SileroVoiceActivityModel extends VoiceActivityModel {
  /** Loads the runtime and the model now (idempotent); rejects with ProviderError if it cannot. */
  load(): Promise<void>;
}

type OrtModule = typeof import('onnxruntime-node');

interface LoadedModel {
  ort: OrtModule;
  session: InferenceSession;
  /** The sample-rate input, the same for every run. */
  sampleRate: Tensor;
}

const loadedModels = new Map<string, Promise<LoadedModel>>();

export function defaultSileroModelPath(): string {
  return createRequire(import.meta.url).resolve('@ricky0123/vad-web/dist/silero_vad_v5.onnx');
}

export function createSileroVad(options: SileroOptions = {}): SileroVoiceActivityModel {
  let modelPath: string | undefined = options.modelPath;
  const model = () => loadModel((modelPath ??= defaultSileroModelPath()));
  return {
    provider: 'silero',
    frameSamples: SILERO_FRAME_SAMPLES,
    load: async () => {
      await model();
    },
    createDetector: () => new SileroDetector(model),
  };
}

/** Drops the shared sessions (tests and process shutdown); the next detector loads afresh. */
export async function releaseSileroModels(): Promise<void> {
  const models = [...loadedModels.values()];
  loadedModels.clear();
  for (const loading of models) {
    const loaded = await loading.catch(() => null);
    await loaded?.session.release();
  }
}

function loadModel(path: string): Promise<LoadedModel> {
  let loading = loadedModels.get(path);
  if (!loading) {
    loading = openModel(path);
    // A failed load must not stick: the next caller (say, after the file is restored) retries.
    loading.catch(() => loadedModels.delete(path));
    loadedModels.set(path, loading);
  }
  return loading;
}

async function openModel(path: string): Promise<LoadedModel> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new ProviderError('silero', 'bad_request', `cannot read the Silero model at ${path}: ${(error as Error).message}`, false, { cause: error });
  }
  try {
    const ort = (await import('onnxruntime-node')) as OrtModule;
    const session = await ort.InferenceSession.create(bytes, {
      // A frame is ~125 µs of work: extra ORT threads would cost more to wake than they save,
      // and would contend with the rest of the server for the same cores.
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    });
    const expected = ['input', 'state', 'sr'];
    if (!expected.every((name) => session.inputNames.includes(name)) || !['output', 'stateN'].every((name) => session.outputNames.includes(name))) {
      throw new Error(`expected inputs ${expected.join(', ')} and outputs output, stateN; the model has ${session.inputNames.join(', ')} → ${session.outputNames.join(', ')} (is it Silero v5?)`);
    }
    return { ort, session, sampleRate: new ort.Tensor('int64', BigInt64Array.from([BigInt(ENGINE_SAMPLE_RATE)]), []) };
  } catch (error) {
    throw new ProviderError('silero', 'bad_request', `cannot load the Silero model at ${path}: ${(error as Error).message}`, false, { cause: error });
  }
}

class SileroDetector implements VoiceActivityDetector {
  private state: Tensor | null = null;
  private readonly context = new Float32Array(CONTEXT_SAMPLES);
  /** Runs are chained: each needs the state the previous one produced. */
  private tail: Promise<unknown> = Promise.resolve();
  /** Bumped by reset() so a run already in flight cannot bring old state back. */
  private generation = 0;
  private closed = false;

  constructor(private readonly model: () => Promise<LoadedModel>) {}

  probability(frame: Float32Array): Promise<number> {
    if (this.closed) return Promise.reject(new Error('the Silero detector is closed'));
    if (frame.length !== SILERO_FRAME_SAMPLES) {
      return Promise.reject(new RangeError(`Silero takes frames of ${SILERO_FRAME_SAMPLES} samples, got ${frame.length}`));
    }
    // The input is assembled now, in call order, so the caller may reuse `frame` at once.
    const input = new Float32Array(CONTEXT_SAMPLES + SILERO_FRAME_SAMPLES);
    input.set(this.context);
    input.set(frame, CONTEXT_SAMPLES);
    this.context.set(frame.subarray(SILERO_FRAME_SAMPLES - CONTEXT_SAMPLES));

    const generation = this.generation;
    const result = this.tail.then(() => this.infer(input, generation));
    this.tail = result.catch(() => {});
    return result;
  }

  reset(): void {
    this.generation++;
    this.state = null;
    this.context.fill(0);
  }

  close(): void {
    this.closed = true;
    this.reset();
  }

  private async infer(input: Float32Array, generation: number): Promise<number> {
    const { ort, session, sampleRate } = await this.model();
    if (this.closed) throw new Error('the Silero detector is closed');
    const state = generation === this.generation && this.state ? this.state : new ort.Tensor('float32', new Float32Array(STATE_SIZE), [2, 1, 128]);
    let outputs: InferenceSession.ReturnType;
    try {
      outputs = await session.run({ input: new ort.Tensor('float32', input, [1, input.length]), state, sr: sampleRate });
    } catch (error) {
      throw new ProviderError('silero', 'server', `Silero inference failed: ${(error as Error).message}`, false, { cause: error });
    }
    if (generation === this.generation) this.state = outputs['stateN'] ?? null;
    const probability = outputs['output']?.data[0];
    if (typeof probability !== 'number') throw new ProviderError('silero', 'bad_response', 'Silero returned no probability', false);
    return probability;
  }
}
