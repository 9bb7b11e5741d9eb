/** A sine at `frequency` Hz, half scale (-9 dBFS), `samples` long. */
export function tone(frequency: number, sampleRate: number, samples: number): Int16Array {
  return Int16Array.from({ length: samples }, (_, i) => Math.round(16384 * Math.sin((2 * Math.PI * frequency * i) / sampleRate)));
}
