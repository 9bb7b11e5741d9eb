// The end of an answering machine's greeting, heard on the line, for a carrier whose detector
// says "a machine" while the call runs but not when the greeting is over (Plivo). A greeting is
// speech, often then a beep, and then the machine records. It is taken as over:
//
//   - when a beep ends: a steady tone (one pitch, the level of a sine) of at least 200 ms;
//   - after a second of silence following speech: the VAD ends the caller's turn, its
//     endpointing set to GREETING_END_SILENCE_MS while it listens;
//   - after a second of caller audio with no speech since the verdict (the greeting was over,
//     or in a pause no longer than a breath would be, before the verdict came);
//   - after GREETING_MAX_MS of the line with none of the above: a message cut by a machine that
//     talks on is still better than none.
//
// Time is the caller audio's own (samples heard), not the wall clock's, so a late or bunched
// delivery of frames cannot end the greeting early. The work per frame is a few additions.

export const GREETING_END_SILENCE_MS = 1_000;
export const GREETING_MAX_MS = 20_000;

/** A beep is a tone at least this long. */
const BEEP_MIN_MS = 200;
const WINDOW_MS = 20;
/** A beep is loud: above this level (dBFS). */
const TONE_MIN_DBFS = -30;
const TONE_MIN_HZ = 350;
const TONE_MAX_HZ = 2_600;
/** A tone keeps one pitch, window after window, within this fraction. */
const TONE_PITCH_TOLERANCE = 0.08;
/** A sine's peak is √2 times its RMS; speech's is three to five times. */
const TONE_CREST = [1.25, 1.65] as const;

export class GreetingEnd {
  #speaking: boolean;
  #quietMs = 0;
  #heardMs = 0;
  #over = false;
  readonly #beep: BeepListener;

  /**
   * `speaking`: whether the VAD is in a turn of the caller's as the verdict arrives. `done` is
   * called once, when the greeting is over.
   */
  constructor(
    speaking: boolean,
    private readonly sampleRate: number,
    private readonly done: () => void,
  ) {
    this.#speaking = speaking;
    this.#beep = new BeepListener(sampleRate);
  }

  get isOver(): boolean {
    return this.#over;
  }

  /** The caller's audio, as it arrives. */
  audio(pcm: Int16Array): void {
    if (this.#over) return;
    const ms = (pcm.length * 1000) / this.sampleRate;
    this.#heardMs += ms;
    if (!this.#speaking) this.#quietMs += ms;
    if (this.#beep.push(pcm) || this.#quietMs >= GREETING_END_SILENCE_MS || this.#heardMs >= GREETING_MAX_MS) this.#finish();
  }

  /** The VAD heard speech begin. */
  speechStarted(): void {
    this.#speaking = true;
    this.#quietMs = 0;
  }

  /** The VAD ended a turn: a second of silence followed speech. */
  turnEnded(): void {
    this.#speaking = false;
    this.#finish();
  }

  #finish(): void {
    if (this.#over) return;
    this.#over = true;
    this.done();
  }
}

/** Hears a beep: a run of windows holding one loud pure tone. `push` is true as one ends. */
export class BeepListener {
  readonly #window: Int16Array;
  #filled = 0;
  #runMs = 0;
  #runHz = 0;

  constructor(sampleRate: number) {
    this.#window = new Int16Array(Math.round((sampleRate * WINDOW_MS) / 1000));
  }

  push(pcm: Int16Array): boolean {
    let ended = false;
    let offset = 0;
    while (offset < pcm.length) {
      const take = Math.min(this.#window.length - this.#filled, pcm.length - offset);
      this.#window.set(pcm.subarray(offset, offset + take), this.#filled);
      this.#filled += take;
      offset += take;
      if (this.#filled < this.#window.length) break;
      this.#filled = 0;
      if (this.#analyse()) ended = true;
    }
    return ended;
  }

  /** One full window; true when it ends a beep. */
  #analyse(): boolean {
    const window = this.#window;
    let sumSquares = 0;
    let peak = 0;
    let crossings = 0;
    for (let i = 0; i < window.length; i++) {
      const sample = window[i]!;
      sumSquares += sample * sample;
      const magnitude = Math.abs(sample);
      if (magnitude > peak) peak = magnitude;
      if (i > 0 && (window[i - 1]! < 0) !== (sample < 0)) crossings++;
    }
    const rms = Math.sqrt(sumSquares / window.length);
    const dbfs = rms > 0 ? 20 * Math.log10(rms / 32768) : -Infinity;
    const hz = (crossings / 2) * (1000 / WINDOW_MS);
    const crest = rms > 0 ? peak / rms : Infinity;
    const tone = dbfs > TONE_MIN_DBFS && hz >= TONE_MIN_HZ && hz <= TONE_MAX_HZ && crest >= TONE_CREST[0] && crest <= TONE_CREST[1];
    if (tone && (this.#runMs === 0 || Math.abs(hz - this.#runHz) <= this.#runHz * TONE_PITCH_TOLERANCE)) {
      if (this.#runMs === 0) this.#runHz = hz;
      this.#runMs += WINDOW_MS;
      return false;
    }
    const wasBeep = this.#runMs >= BEEP_MIN_MS;
    this.#runMs = tone ? WINDOW_MS : 0;
    this.#runHz = tone ? hz : 0;
    return wasBeep;
  }
}
