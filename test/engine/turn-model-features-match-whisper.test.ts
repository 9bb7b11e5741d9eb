// The end-of-turn model's input: Whisper's log-mel features, computed by our own code (the model
// was trained on Hugging Face's WhisperFeatureExtractor's, so they must be the same numbers).
// Checked three independent ways: the 400-point transform against the plain DFT sum, a pure
// tone landing in the mel filter the Slaney scale puts it in (worked out here, not read from the
// code), and values the reference implementation (Pipecat's numpy port of
// WhisperFeatureExtractor, _whisper_features.py, numpy 2.4) printed for the same signal.
import { describe, expect, it } from 'vitest';
import { dft400, FRAMES, logMelFeatures, N_MELS } from '../../server/engine/turn-model-worker.mjs';

const RATE = 16_000;

/** The reference's test signal: 3 s of 440 Hz, 2,500 Hz and a chirp from 200 Hz, as PCM16. */
function referenceSignal(): Int16Array {
  return Int16Array.from({ length: 3 * RATE }, (_, i) => {
    const t = i / RATE;
    return Math.round((0.3 * Math.sin(2 * Math.PI * 440 * t) + 0.1 * Math.sin(2 * Math.PI * 2500 * t) + 0.05 * Math.sin(2 * Math.PI * (200 + 500 * t) * t)) * 32767);
  });
}

const at = (features: Float32Array, bin: number, frame: number) => features[bin * FRAMES + frame]!;

describe("Whisper's log-mel features for the end-of-turn model", () => {
  it('transforms 400 real samples as the plain DFT sum does, bins 0 to 200', () => {
    const frame = Array.from({ length: 400 }, (_, i) => Math.sin(i * 0.37) + 0.5 * Math.cos(i * 1.91) + ((i * 7919) % 13) / 13);
    const { re, im } = dft400(frame);
    for (const k of [0, 1, 7, 50, 123, 199, 200]) {
      let sr = 0;
      let si = 0;
      for (let n = 0; n < 400; n++) {
        sr += frame[n]! * Math.cos((-2 * Math.PI * k * n) / 400);
        si += frame[n]! * Math.sin((-2 * Math.PI * k * n) / 400);
      }
      expect(re[k]).toBeCloseTo(sr, 8);
      expect(im[k]).toBeCloseTo(si, 8);
    }
  });

  it('puts a pure tone in the mel bin whose filter is centred on it', () => {
    // Slaney's mel scale: 3f/200 below 1 kHz, 15 + 27·ln(f/1000)/ln(6.4) above; 80 filters
    // between 0 and 8 kHz, filter m centred at mel_max·(m+1)/81.
    const mel = (f: number) => (f < 1000 ? (3 * f) / 200 : 15 + (27 * Math.log(f / 1000)) / Math.log(6.4));
    const hz = (m: number) => (m < 15 ? (200 * m) / 3 : 1000 * Math.exp((Math.log(6.4) * (m - 15)) / 27));
    const melMax = mel(8000);
    for (const bin of [7, 26, 60]) {
      const frequency = hz((melMax * (bin + 1)) / 81);
      const features = logMelFeatures(Int16Array.from({ length: 2 * RATE }, (_, i) => Math.round(10_000 * Math.sin((2 * Math.PI * frequency * i) / RATE))));
      // A frame in the middle of the tone (the 2 s sit at the end of the 8 s window).
      const frame = 700;
      const column = Array.from({ length: N_MELS }, (_, m) => at(features, m, frame));
      expect(column.indexOf(Math.max(...column)), `${frequency.toFixed(0)} Hz`).toBe(bin);
      // Before the tone, 6 s of padding: the floor every quiet frame is clamped to, 8 below the
      // loudest log10 value, so 2 below the loudest feature after (x + 4) / 4.
      expect(at(features, bin, 100)).toBeCloseTo(features.reduce((a, b) => Math.max(a, b)) - 2, 5);
    }
  });

  it("gives the reference implementation's values for the same signal", () => {
    const features = logMelFeatures(referenceSignal());
    expect(features.length).toBe(80 * 800);
    // [mel bin, frame, value] printed by the reference, past the 5 s of padding in front.
    const reference: Array<[number, number, number]> = [
      [47, 664, 0.161934], [52, 522, 0.250399], [50, 518, 1.436933], [51, 508, 0.92696], [45, 705, 0.334817],
      [15, 537, 1.299805], [52, 757, 1.26351], [9, 587, 1.477608], [12, 533, 1.615135], [48, 659, 0.548911],
      // Its maximum (the 440 Hz bin) and its clamped floor.
      [10, 600, 1.666956], [0, 0, -0.224336],
    ];
    for (const [bin, frame, value] of reference) expect(at(features, bin, frame), `bin ${bin}, frame ${frame}`).toBeCloseTo(value, 4);
    expect(Math.max(...features)).toBeCloseTo(1.775664, 5);
    expect(Math.min(...features)).toBeCloseTo(-0.224336, 5);
  });
});
