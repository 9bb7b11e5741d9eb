// Streaming polyphase FIR resampler for rational ratios (48k↔16k for WebRTC, 24k→16k for OpenAI
// TTS, 8k→16k for telephony voices). The probe measured this design at ~38 µs per 20 ms frame
// with a 10 kHz alias at -78 dB; stateless resamplers click at every chunk boundary.
//
// Conceptually the input is upsampled by L (zeros between samples), low-pass filtered at the
// lower Nyquist, and every M-th sample kept; the polyphase form computes only the kept samples,
// each from `tapsPerPhase` input samples. The output is shifted by the filter's delay so sample
// n of the output sits at time n/outputRate of the input: output of any chunking is identical,
// sample for sample, and a whole stream (after flush) is exactly ceil(inputLength × L / M) long.

export interface ResamplerOptions {
  /** Filter taps per output sample. 48 keeps aliases below -60 dB at ~40 µs per 20 ms frame. */
  tapsPerPhase?: number;
  /** Cutoff as a fraction of the lower Nyquist frequency. */
  cutoff?: number;
}

interface FilterBank {
  /** L phases of `taps` coefficients each, phase-major; each phase sums to 1. */
  coefficients: Float64Array;
  taps: number;
  /** The filter's delay in upsampled samples. */
  delay: number;
}

const banks = new Map<string, FilterBank>();

export class StreamingResampler {
  readonly up: number;
  readonly down: number;
  private readonly bank: FilterBank;
  /** Input history (the last taps-1 samples) followed by the chunk being processed. */
  private work: Float64Array;
  /** Index of the next output's newest input sample, counted from the start of the stream. */
  private nextInput: number;
  private nextPhase: number;
  private received = 0;
  private emitted = 0;
  private readonly fusedUpsampling: boolean;

  constructor(
    readonly inputRate: number,
    readonly outputRate: number,
    options: ResamplerOptions = {},
  ) {
    if (!Number.isInteger(inputRate) || !Number.isInteger(outputRate) || inputRate <= 0 || outputRate <= 0) {
      throw new RangeError(`sample rates must be positive integers, got ${inputRate} → ${outputRate}`);
    }
    const divisor = gcd(inputRate, outputRate);
    this.up = outputRate / divisor;
    this.down = inputRate / divisor;
    // Beyond this the filter table passes 100 kB; no rate we use comes close (44.1k → 16k needs 160).
    if (this.up > 320) throw new RangeError(`resampling ${inputRate} → ${outputRate} needs ${this.up} phases; at most 320 are supported`);
    // An even tap count lets the inner loop run two accumulators without a remainder step.
    const taps = 2 * Math.max(1, Math.ceil((options.tapsPerPhase ?? 48) / 2));
    this.bank = filterBank(this.up, this.down, taps, options.cutoff ?? 0.9);
    this.fusedUpsampling = this.down === 1 && (this.up === 2 || this.up === 3);
    this.work = new Float64Array(this.bank.taps - 1 + 4096);
    this.nextInput = Math.floor(this.bank.delay / this.up);
    this.nextPhase = this.bank.delay % this.up;
  }

  get ratio(): number {
    return this.up / this.down;
  }

  /** Resamples the next chunk of the stream; the output lags the input by the filter's half-length. */
  process(input: Int16Array): Int16Array {
    if (this.up === this.down) return input.slice();
    return this.run(input, Infinity);
  }

  /** Emits the samples still held in the filter (the stream's tail) and starts a new stream. */
  flush(): Int16Array {
    if (this.up === this.down) return new Int16Array(0);
    const total = Math.ceil((this.received * this.up) / this.down);
    const tailInputs = Math.ceil(this.bank.delay / this.up) + 1;
    const tail = this.run(new Int16Array(tailInputs), total - this.emitted);
    this.reset();
    return tail;
  }

  reset(): void {
    this.work.fill(0, 0, this.bank.taps - 1);
    this.nextInput = Math.floor(this.bank.delay / this.up);
    this.nextPhase = this.bank.delay % this.up;
    this.received = 0;
    this.emitted = 0;
  }

  private run(input: Int16Array, limit: number): Int16Array {
    const taps = this.bank.taps;
    const history = taps - 1;
    const needed = history + input.length;
    if (this.work.length < needed) {
      const grown = new Float64Array(needed);
      grown.set(this.work.subarray(0, history));
      this.work = grown;
    }
    const work = this.work;
    for (let i = 0; i < input.length; i++) work[history + i] = input[i]!;

    const up = this.up;
    const down = this.down;
    const base = this.received - history; // stream index of work[0]
    const end = this.received + input.length;
    // Outputs whose newest input sample has arrived: upsampled positions t = i·L + p, stepping by M.
    const firstT = this.nextInput * up + this.nextPhase;
    const available = Math.max(0, Math.ceil((end * up - firstT) / down));
    const count = Math.min(available, limit);
    const out = new Int16Array(count);

    let i = this.nextInput;
    let phase = this.nextPhase;
    const stepInputs = Math.floor(down / up);
    const stepPhase = down % up;
    let n = 0;
    while (n < count) {
      const newest = i - base;
      // With M = 1 the L outputs of an input are always produced together (they wait for the
      // same sample), so chunking cannot change which path computes a given output.
      if (this.fusedUpsampling && phase === 0 && count - n >= up) {
        if (up === 2) this.upsampleBy2(out, n, newest);
        else this.upsampleBy3(out, n, newest);
        n += up;
        i++;
        continue;
      }
      out[n++] = toInt16(this.dotInPairs(phase * taps, newest));
      i += stepInputs;
      phase += stepPhase;
      if (phase >= up) {
        phase -= up;
        i++;
      }
    }
    this.nextInput = i;
    this.nextPhase = phase;
    this.received = end;
    this.emitted += count;
    work.copyWithin(0, input.length, input.length + history);
    return out;
  }

  /** One output: `taps` coefficients from `c` against the inputs from `newest` back. */
  private dotInPairs(c: number, newest: number): number {
    const { coefficients } = this.bank;
    const work = this.work;
    const stop = c + this.bank.taps;
    // Two accumulators halve the floating-point dependency chain (~20 % faster here).
    let even = 0;
    let odd = 0;
    for (; c < stop; c += 2, newest -= 2) {
      even += coefficients[c]! * work[newest]!;
      odd += coefficients[c + 1]! * work[newest - 1]!;
    }
    return even + odd;
  }

  // Integer upsampling (16k → 48k, 8k → 16k): the L outputs that follow one input all read the
  // same history, so one pass over it feeds L accumulators; about twice as fast as L passes.
  // By 2 (every packet of a phone call, both ways of 8 kHz) the pass is unrolled four taps at a
  // time (the tap count is even; a pair is left when it is not a multiple of four): each sum still
  // adds its terms in the same order, so the output is the same to the bit, for about two thirds
  // of the CPU: 14.2-14.7 against 20.1-23.2 µs per 160-sample packet through process() (5 s of a
  // two-tone signal in 20 ms chunks, 20 times, process CPU time, Node 20.20, load average 13).
  private upsampleBy2(out: Int16Array, n: number, newest: number): void {
    const { coefficients, taps } = this.bank;
    const work = this.work;
    let a = 0;
    let b = 0;
    let k = 0;
    let j = newest;
    for (const stop = taps - (taps % 4); k < stop; k += 4, j -= 4) {
      const x0 = work[j]!;
      const x1 = work[j - 1]!;
      const x2 = work[j - 2]!;
      const x3 = work[j - 3]!;
      a += coefficients[k]! * x0;
      b += coefficients[taps + k]! * x0;
      a += coefficients[k + 1]! * x1;
      b += coefficients[taps + k + 1]! * x1;
      a += coefficients[k + 2]! * x2;
      b += coefficients[taps + k + 2]! * x2;
      a += coefficients[k + 3]! * x3;
      b += coefficients[taps + k + 3]! * x3;
    }
    for (; k < taps; k++, j--) {
      const x = work[j]!;
      a += coefficients[k]! * x;
      b += coefficients[taps + k]! * x;
    }
    out[n] = toInt16(a);
    out[n + 1] = toInt16(b);
  }

  private upsampleBy3(out: Int16Array, n: number, newest: number): void {
    const { coefficients, taps } = this.bank;
    const work = this.work;
    let a = 0;
    let b = 0;
    let c = 0;
    for (let k = 0; k < taps; k++) {
      const x = work[newest - k]!;
      a += coefficients[k]! * x;
      b += coefficients[taps + k]! * x;
      c += coefficients[2 * taps + k]! * x;
    }
    out[n] = toInt16(a);
    out[n + 1] = toInt16(b);
    out[n + 2] = toInt16(c);
  }
}

function toInt16(sum: number): number {
  const rounded = Math.round(sum);
  return rounded > 32767 ? 32767 : rounded < -32768 ? -32768 : rounded;
}

/** Resamples a whole clip at once (process + flush). */
export function resample(pcm: Int16Array, inputRate: number, outputRate: number, options?: ResamplerOptions): Int16Array {
  if (inputRate === outputRate) return pcm.slice();
  const resampler = new StreamingResampler(inputRate, outputRate, options);
  const body = resampler.process(pcm);
  const tail = resampler.flush();
  const out = new Int16Array(body.length + tail.length);
  out.set(body);
  out.set(tail, body.length);
  return out;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/**
 * Blackman-windowed sinc at the upsampled rate L × input, split into L phases. Its length is
 * taps × L - 1 (odd, so the delay is a whole number of upsampled samples), stored with a
 * trailing zero so every phase has exactly `taps` coefficients. Coefficients are stored newest-
 * input-first: phase p's k-th tap multiplies the input sample k steps before the newest.
 */
function filterBank(up: number, down: number, taps: number, cutoff: number): FilterBank {
  const key = `${up}/${down}/${taps}/${cutoff}`;
  const cached = banks.get(key);
  if (cached) return cached;

  const length = taps * up - 1;
  const delay = (length - 1) / 2;
  // Cutoff in cycles per upsampled sample: the lower of the two Nyquist frequencies.
  const fc = (cutoff * 0.5) / Math.max(up, down);
  const prototype = new Float64Array(taps * up);
  for (let j = 0; j < length; j++) {
    const x = j - delay;
    const sinc = x === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * x) / (Math.PI * x);
    const w = (2 * Math.PI * j) / (length - 1);
    const blackman = 0.42 - 0.5 * Math.cos(w) + 0.08 * Math.cos(2 * w);
    prototype[j] = sinc * blackman;
  }

  const coefficients = new Float64Array(taps * up);
  for (let p = 0; p < up; p++) {
    let sum = 0;
    for (let k = 0; k < taps; k++) sum += prototype[p + k * up]!;
    // Normalising each phase to unit DC gain keeps the phases balanced, which would otherwise
    // leave a faint tone at the input rate when upsampling.
    for (let k = 0; k < taps; k++) coefficients[p * taps + k] = prototype[p + k * up]! / sum;
  }
  const bank = { coefficients, taps, delay };
  banks.set(key, bank);
  return bank;
}
