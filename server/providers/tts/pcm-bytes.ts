// Network chunks of a PCM16 body split wherever TCP pleases, often inside a sample. This turns
// such a byte stream back into whole samples, carrying the odd byte to the next chunk.
import { int16FromBytes } from '../../audio/pcm.ts';

export class Pcm16ByteReader {
  #carry: number | null = null;

  /** Whole samples of `bytes` (with the byte carried from before); may be empty. */
  push(bytes: Uint8Array): Int16Array {
    let input = bytes;
    if (this.#carry !== null) {
      input = new Uint8Array(bytes.length + 1);
      input[0] = this.#carry;
      input.set(bytes, 1);
      this.#carry = null;
    }
    const whole = input.length - (input.length % 2);
    if (whole < input.length) this.#carry = input[whole] ?? null;
    // int16FromBytes only returns null for an odd length, which `whole` never is.
    return int16FromBytes(input.subarray(0, whole)) ?? new Int16Array(0);
  }

  /** True when the stream ended inside a sample (a truncated body). */
  get hasPartialSample(): boolean {
    return this.#carry !== null;
  }
}
