// Small measuring helpers shared by the benches.

export interface BenchRow {
  name: string;
  value: string;
  target?: string;
  how: string;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

/** Runs `fn` `warmup` times unmeasured, then `runs` times; returns sorted durations in ms. */
export async function timeRuns(runs: number, fn: () => unknown, warmup = 3): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b);
}

export const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;

/** "p50 / p95 ms over n" of unsorted millisecond values, or "none" when there are none. */
export function p50p95(values: number[]): string {
  if (values.length === 0) return 'none';
  const sorted = [...values].sort((a, b) => a - b);
  return `${percentile(sorted, 50).toFixed(0)} / ${percentile(sorted, 95).toFixed(0)} ms p50/p95 over ${sorted.length} turns`;
}
