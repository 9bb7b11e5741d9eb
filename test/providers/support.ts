// Small helpers for the provider tests: drain a stream, and capture how a promise failed.
export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

/** The rejection of `promise`; fails the test when it resolves instead. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but the promise resolved');
}

export function totalSamples(chunks: readonly Int16Array[]): number {
  return chunks.reduce((n, c) => n + c.length, 0);
}

export const neverAborted = (): AbortSignal => new AbortController().signal;
