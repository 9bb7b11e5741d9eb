// Types of what turn-model-worker.mjs exports (its features, for their tests).
export declare const SAMPLE_RATE: number;
export declare const N_FFT: number;
export declare const HOP: number;
export declare const N_MELS: number;
export declare const SECONDS: number;
export declare const FRAMES: number;
/** Centre frequency of each of the 80 mel filters, in Hz. */
export declare function melCentresHz(): number[];
/** The 400-point DFT of a real frame, bins 0 to 200. */
export declare function dft400(frame: ArrayLike<number>): { re: Float64Array; im: Float64Array };
/** Whisper log-mel features for Smart Turn v3: 80 × 800, row-major (mel bin, then frame). */
export declare function logMelFeatures(pcm: Int16Array): Float32Array;
