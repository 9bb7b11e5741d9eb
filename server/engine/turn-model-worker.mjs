// The end-of-turn model (turn-model.ts) off the thread that paces audio: Whisper's log-mel
// features of the caller's last 8 s and one ONNX run, both here. Plain JS, like the Silero
// worker, so it starts without the parent's loader and is copied beside the bundle as is.
//
// The model is Smart Turn v3's: one input `input_features`, float32 [1, 80, 800] (80 mel bins,
// 800 frames of 10 ms), and a first output whose first value is the probability that the turn is
// complete (the model ends in a sigmoid). The features are those of Hugging Face's
// WhisperFeatureExtractor with chunk_length 8, as Pipecat's LocalSmartTurnAnalyzerV3 makes them:
// audio cut to its last 8 s or zero-padded in front to 8 s, normalized to zero mean and unit
// variance, a centred 400-point STFT with a periodic Hann window every 160 samples, power
// projected onto 80 Slaney mel filters (0–8 kHz), log10 floored at 1e-10, the last frame dropped,
// values clamped to 8 below the maximum, then (x + 4) / 4.
//
// Messages in:  {type:'infer', id, pcm: Int16Array}
// Messages out: {type:'ready', inputName, outputName} | {type:'failed', message}
//               {type:'result', id, probability} | {type:'error', id, message}
//
// Imported on the main thread (tests of the features), it only exports.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';

export const SAMPLE_RATE = 16_000;
export const N_FFT = 400;
export const HOP = 160;
export const N_MELS = 80;
export const SECONDS = 8;
export const FRAMES = (SECONDS * SAMPLE_RATE) / HOP; // 800
const N_SAMPLES = SECONDS * SAMPLE_RATE;
const BINS = N_FFT / 2 + 1;

function hzToMel(hz) {
  return hz >= 1000 ? 15 + Math.log(hz / 1000) * (27 / Math.log(6.4)) : (3 * hz) / 200;
}

function melToHz(mel) {
  return mel >= 15 ? 1000 * Math.exp((Math.log(6.4) / 27) * (mel - 15)) : (200 * mel) / 3;
}

/**
 * Slaney-normalized triangular filters, as librosa and transformers make them: for each mel bin,
 * the first FFT bin it covers and its weights from there (a filter spans a few bins of 201).
 */
function melFilters() {
  const melMax = hzToMel(SAMPLE_RATE / 2);
  const edges = Array.from({ length: N_MELS + 2 }, (_, i) => melToHz((melMax * i) / (N_MELS + 1)));
  const filters = [];
  for (let m = 0; m < N_MELS; m++) {
    const row = new Float64Array(BINS);
    const [lo, centre, hi] = [edges[m], edges[m + 1], edges[m + 2]];
    const norm = 2 / (hi - lo);
    for (let k = 0; k < BINS; k++) {
      const f = (k * (SAMPLE_RATE / 2)) / (BINS - 1);
      const weight = Math.max(0, Math.min((f - lo) / (centre - lo), (hi - f) / (hi - centre)));
      row[k] = weight * norm;
    }
    let first = row.findIndex((w) => w > 0);
    if (first < 0) first = 0;
    let last = BINS - 1;
    while (last > first && row[last] === 0) last--;
    filters.push({ first, weights: row.slice(first, last + 1) });
  }
  return filters;
}

/** Centre frequency of each mel filter, in Hz: what a test checks a tone against. */
export function melCentresHz() {
  const melMax = hzToMel(SAMPLE_RATE / 2);
  return Array.from({ length: N_MELS }, (_, m) => melToHz((melMax * (m + 1)) / (N_MELS + 1)));
}

const FILTERS = melFilters();
const WINDOW = Float64Array.from({ length: N_FFT }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / N_FFT));
const COS = Float64Array.from({ length: N_FFT }, (_, i) => Math.cos((-2 * Math.PI * i) / N_FFT));
const SIN = Float64Array.from({ length: N_FFT }, (_, i) => Math.sin((-2 * Math.PI * i) / N_FFT));

/**
 * The DFT of the complex signal (re, im) at `offset`, every `stride`-th sample, n points (n
 * divides N_FFT: 2ⁿ·5ᵐ), into outRe/outIm at `outOffset`, by mixed-radix Cooley–Tukey. A
 * 400-point transform is not a power of two, and the plain sum for every frame cost 64 M
 * multiply-adds per question.
 */
function dft(re, im, n, offset, stride, outRe, outIm, outOffset) {
  const scale = N_FFT / n;
  if (n <= 5) {
    // Small enough for the plain sum, straight from the strided input.
    for (let k = 0; k < n; k++) {
      let sr = 0;
      let si = 0;
      for (let j = 0; j < n; j++) {
        const t = ((j * k) % n) * scale;
        const xr = re[offset + j * stride];
        const xi = im[offset + j * stride];
        sr += xr * COS[t] - xi * SIN[t];
        si += xr * SIN[t] + xi * COS[t];
      }
      outRe[outOffset + k] = sr;
      outIm[outOffset + k] = si;
    }
    return;
  }
  const p = n % 2 === 0 ? 2 : 5;
  const m = n / p;
  // Sub-transforms of every p-th sample, side by side in the output.
  for (let r = 0; r < p; r++) dft(re, im, m, offset + r * stride, stride * p, outRe, outIm, outOffset + r * m);
  const [tr, ti] = scratch(n);
  for (let k = 0; k < n; k++) {
    const km = k % m;
    let sr = 0;
    let si = 0;
    for (let r = 0; r < p; r++) {
      const t = ((r * k) % n) * scale;
      const yr = outRe[outOffset + r * m + km];
      const yi = outIm[outOffset + r * m + km];
      sr += yr * COS[t] - yi * SIN[t];
      si += yr * SIN[t] + yi * COS[t];
    }
    tr[k] = sr;
    ti[k] = si;
  }
  outRe.set(tr, outOffset);
  outIm.set(ti, outOffset);
}

/** One pair of buffers per transform size: each size occurs once on the recursion's path at a time. */
const scratches = new Map();
function scratch(n) {
  let pair = scratches.get(n);
  if (!pair) scratches.set(n, (pair = [new Float64Array(n), new Float64Array(n)]));
  return pair;
}

const HALF = N_FFT / 2;
const packedRe = new Float64Array(HALF);
const packedIm = new Float64Array(HALF);
const zRe = new Float64Array(HALF);
const zIm = new Float64Array(HALF);

/**
 * Bins 0–200 of the 400-point DFT of the real `frame`, into re/im: one 200-point complex
 * transform of the even samples as real parts and the odd as imaginary, then split (half the work
 * of a complex transform of the real frame).
 */
function realDft(frame, re, im) {
  for (let j = 0; j < HALF; j++) {
    packedRe[j] = frame[2 * j];
    packedIm[j] = frame[2 * j + 1];
  }
  dft(packedRe, packedIm, HALF, 0, 1, zRe, zIm, 0);
  for (let k = 0; k <= HALF; k++) {
    const a = k % HALF;
    const b = (HALF - k) % HALF;
    // Even part E = (Z[k] + conj Z[N/2−k]) / 2, odd part O = (Z[k] − conj Z[N/2−k]) / 2i.
    const er = (zRe[a] + zRe[b]) / 2;
    const ei = (zIm[a] - zIm[b]) / 2;
    const or = (zIm[a] + zIm[b]) / 2;
    const oi = -(zRe[a] - zRe[b]) / 2;
    // X[k] = E[k] + W^k·O[k]
    const c = COS[k % N_FFT];
    const s = SIN[k % N_FFT];
    re[k] = er + or * c - oi * s;
    im[k] = ei + or * s + oi * c;
  }
}

/** The 400-point DFT of a real frame, bins 0–200 (exported for its test against the plain sum). */
export function dft400(frame) {
  const re = new Float64Array(BINS);
  const im = new Float64Array(BINS);
  realDft(Float64Array.from(frame), re, im);
  return { re, im };
}

/**
 * Whisper log-mel features of 16 kHz PCM16 for Smart Turn v3: Float32Array of 80 × 800, row-major
 * (mel bin, then frame). Longer audio keeps its last 8 s; shorter is padded with silence in front.
 */
export function logMelFeatures(pcm) {
  const x = new Float32Array(N_SAMPLES);
  const take = Math.min(pcm.length, N_SAMPLES);
  const from = pcm.length - take;
  for (let i = 0; i < take; i++) x[N_SAMPLES - take + i] = pcm[from + i] / 32768;
  // Zero mean, unit variance over the 8 s, padding included (float32, as the reference does).
  let mean = 0;
  for (let i = 0; i < N_SAMPLES; i++) mean += x[i];
  mean /= N_SAMPLES;
  let variance = 0;
  for (let i = 0; i < N_SAMPLES; i++) variance += (x[i] - mean) ** 2;
  variance /= N_SAMPLES;
  const sd = Math.sqrt(variance + 1e-7);
  for (let i = 0; i < N_SAMPLES; i++) x[i] = (x[i] - mean) / sd;

  // Reflect-padded by half a window at each end, so frame t is centred on sample t × HOP.
  const pad = N_FFT / 2;
  const at = (i) => x[i < 0 ? -i : i >= N_SAMPLES ? 2 * (N_SAMPLES - 1) - i : i];
  const out = new Float32Array(N_MELS * FRAMES);
  const frame = new Float64Array(N_FFT);
  const re = new Float64Array(BINS);
  const im = new Float64Array(BINS);
  const power = new Float64Array(BINS);
  let max = -Infinity;
  for (let t = 0; t < FRAMES; t++) {
    const start = t * HOP - pad;
    for (let i = 0; i < N_FFT; i++) frame[i] = at(start + i) * WINDOW[i];
    realDft(frame, re, im);
    for (let k = 0; k < BINS; k++) power[k] = re[k] * re[k] + im[k] * im[k];
    for (let m = 0; m < N_MELS; m++) {
      const { first, weights } = FILTERS[m];
      let sum = 0;
      for (let k = 0; k < weights.length; k++) sum += weights[k] * power[first + k];
      const value = Math.log10(Math.max(1e-10, sum));
      out[m * FRAMES + t] = value;
      if (value > max) max = value;
    }
  }
  for (let i = 0; i < out.length; i++) out[i] = (Math.max(out[i], max - 8) + 4) / 4;
  return out;
}

if (!isMainThread && workerData?.role === 'voxflow-turn-model') await serve();

async function serve() {
  let ort;
  let session;
  let inputName;
  let outputName;
  try {
    const { readFile } = await import('node:fs/promises');
    ort = await import('onnxruntime-node');
    session = await ort.InferenceSession.create(await readFile(workerData.modelPath), {
      // One thread: one turn at a time per call, and extra ORT threads would contend with the server.
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    });
    if (!session.inputNames.includes('input_features') || session.inputNames.length !== 1 || session.outputNames.length < 1) {
      throw new Error(`expected one input input_features [1, 80, 800] and a probability out (Smart Turn v3); the model has ${session.inputNames.join(', ') || 'no inputs'} → ${session.outputNames.join(', ') || 'no outputs'}`);
    }
    inputName = 'input_features';
    outputName = session.outputNames[0];
    // One run on silence: a model whose shapes do not fit fails here, at start, not on a call.
    const probe = await session.run({ [inputName]: new ort.Tensor('float32', logMelFeatures(new Int16Array(0)), [1, N_MELS, FRAMES]) });
    checkProbability(probe[outputName]);
  } catch (error) {
    parentPort.postMessage({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
    return;
  }
  parentPort.postMessage({ type: 'ready', inputName, outputName });

  // One request at a time, in order: a call asks once per pause, and the runs are short.
  let chain = Promise.resolve();
  let shuttingDown = false;
  parentPort.on('message', (message) => {
    if (message.type === 'shutdown') {
      // After the runs asked for so far, release the session and exit: terminating the thread
      // during a run aborts the process (server/providers/turn/worker-shutdown.ts).
      shuttingDown = true;
      chain = chain.then(async () => {
        try {
          await session.release();
        } catch {
          // released or broken already
        }
        process.exit(0);
      });
      return;
    }
    if (message.type !== 'infer' || shuttingDown) return;
    chain = chain.then(async () => {
      try {
        const features = logMelFeatures(message.pcm);
        const outputs = await session.run({ [inputName]: new ort.Tensor('float32', features, [1, N_MELS, FRAMES]) });
        parentPort.postMessage({ type: 'result', id: message.id, probability: checkProbability(outputs[outputName]) });
      } catch (error) {
        parentPort.postMessage({ type: 'error', id: message.id, message: error instanceof Error ? error.message : String(error) });
      }
    });
  });
}

function checkProbability(tensor) {
  const value = tensor?.data?.[0];
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new Error(`the model's output ${outputNameOf(tensor)} is not a probability (got ${String(value)}); is it Smart Turn v3?`);
  }
  return value;
}

function outputNameOf(tensor) {
  return tensor?.dims ? `[${tensor.dims.join(', ')}]` : '';
}
