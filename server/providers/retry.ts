// The one retry policy: a per-attempt timeout, one retry for retryable failures, no retry once
// the caller aborted. SDK clients are built with their own retries off (maxRetries: 0).
import { ProviderError } from './types.ts';

export interface RetryOptions {
  provider: string;
  /** Time allowed for each attempt. */
  timeoutMs: number;
  /** Retries after the first attempt; 1 by default. */
  retries?: number;
  /**
   * Wait before retry n (counted from 0) of backoffMs × 2^n; none by default. A carrier's REST
   * API that failed once is asked again a moment later, not at once, so a blip can pass.
   */
  backoffMs?: number;
  signal: AbortSignal;
}

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || (error as { code?: string }).code === 'ABORT_ERR');
}

/** Runs `attempt` with a signal that fires on the caller's abort or on the attempt's timeout. */
export async function withRetry<T>(attempt: (signal: AbortSignal) => Promise<T>, options: RetryOptions): Promise<T> {
  const retries = options.retries ?? 1;
  for (let round = 0; ; round++) {
    options.signal.throwIfAborted();
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = AbortSignal.any([options.signal, timeout]);
    try {
      return await attempt(signal);
    } catch (error) {
      if (options.signal.aborted) throw options.signal.reason ?? error;
      const failure = timeout.aborted
        ? new ProviderError(options.provider, 'timeout', `${options.provider} did not answer within ${options.timeoutMs} ms`, true, { cause: error })
        : toProviderError(options.provider, error);
      if (!failure.retryable || round >= retries) throw failure;
      if (options.backoffMs) await backoff(options.backoffMs * 2 ** round, options.signal);
    }
  }
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
function backoff(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Maps SDK and HTTP errors onto ProviderError kinds (status codes where there is one). */
export function toProviderError(provider: string, error: unknown): ProviderError {
  if (error instanceof ProviderError) return error;
  const status = (error as { status?: number; statusCode?: number })?.status ?? (error as { statusCode?: number })?.statusCode;
  const message = error instanceof Error ? error.message : String(error);
  // A body that does not parse came from something that answered, just not with what we asked for.
  if (error instanceof SyntaxError) return new ProviderError(provider, 'bad_response', `${provider} sent a malformed response: ${message}`, false, { cause: error });
  if (typeof status === 'number') {
    if (status === 401 || status === 403) return new ProviderError(provider, 'auth', `${provider} refused the key (${status})`, false, { cause: error });
    if (status === 429) return new ProviderError(provider, 'rate_limit', `${provider} is rate limiting (429)`, true, { cause: error });
    if (status >= 500) return new ProviderError(provider, 'server', `${provider} failed (${status})`, true, { cause: error });
    return new ProviderError(provider, 'bad_request', `${provider} refused the request (${status}): ${message}`, false, { cause: error });
  }
  return new ProviderError(provider, 'network', `${provider} could not be reached: ${message}`, true, { cause: error });
}

/**
 * A streamed answer with the retry policy applied where it is safe: `open` (the request up to
 * the first item) runs under withRetry, so a refused, hung or broken start is retried once;
 * after the first item has been handed over nothing is retried. Each later item must arrive
 * within `timeoutMs` of the previous one. The request is cancelled when the consumer stops
 * early, and the caller's abort surfaces as the abort, never as a ProviderError.
 */
export async function* withRetryStream<T>(open: (signal: AbortSignal) => Promise<AsyncIterator<T>>, options: RetryOptions): AsyncGenerator<T> {
  const opened = await withRetry(async (attemptSignal) => {
    // The attempt's signal carries a timer that would cut the stream later: the request gets
    // its own controller, tied to that signal only until the first item is in.
    const request = new AbortController();
    const forward = () => request.abort(attemptSignal.reason);
    if (attemptSignal.aborted) forward();
    else attemptSignal.addEventListener('abort', forward, { once: true });
    try {
      const iterator = await open(request.signal);
      const first = await iterator.next();
      // Some SDK iterators end quietly when their request is aborted.
      if (attemptSignal.aborted) throw attemptSignal.reason;
      return { request, iterator, first };
    } catch (error) {
      request.abort();
      throw error;
    } finally {
      attemptSignal.removeEventListener('abort', forward);
    }
  }, options);

  const { request, iterator } = opened;
  const { signal, provider, timeoutMs } = options;
  const cancel = () => request.abort(signal.reason);
  signal.addEventListener('abort', cancel, { once: true });
  let stalled = false;
  const stallError = () => new ProviderError(provider, 'timeout', `${provider} stopped sending for ${timeoutMs} ms`);
  try {
    let next = opened.first;
    while (!next.done) {
      yield next.value;
      signal.throwIfAborted();
      const timer = setTimeout(() => {
        stalled = true;
        request.abort();
      }, timeoutMs);
      try {
        next = await iterator.next();
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        if (stalled) throw stallError();
        throw toProviderError(provider, error);
      } finally {
        clearTimeout(timer);
      }
    }
    if (signal.aborted) throw signal.reason;
    if (stalled) throw stallError();
  } finally {
    signal.removeEventListener('abort', cancel);
    // Releases the connection when the consumer stopped early; a no-op once the body is read.
    request.abort();
  }
}
