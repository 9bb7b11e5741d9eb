// Live transcription over Deepgram's WebSocket: audio streams while the user speaks, interim
// results feed captions, and at the end of the turn a Finalize makes Deepgram hand over what it
// still holds, so the final text is ready within tens of milliseconds of the turn ending.
import type { DeepgramClient } from '@deepgram/sdk';
import { bytesFromInt16 } from '../../audio/pcm.ts';
import { createDeepgramClient, type DeepgramListenSocket } from '../deepgram-client.ts';
import { isAbortError, toProviderError, withRetry } from '../retry.ts';
import { ProviderError, type SpeechToText, type TranscriptionStream } from '../types.ts';
import { DEEPGRAM, openListenSocket } from './deepgram-socket.ts';
import { DEFAULT_MODELS } from '../catalog.ts';

export interface DeepgramSpeechToTextOptions {
  apiKey: string;
  /** http(s) URL of a Deepgram-compatible server; Deepgram's own by default. */
  baseUrl?: string;
  model?: string;
  /** Time allowed to connect, and for the final transcript after a flush. */
  timeoutMs?: number;
  /** Silence after which Deepgram marks an utterance speech_final. */
  endpointingMs?: number;
  utteranceEndMs?: number;
  /** Deepgram drops a socket that carries nothing for 10 s; a KeepAlive after this much idle time. */
  keepAliveMs?: number;
  /**
   * Deepgram may leave a Finalize unanswered when it holds no audio. When it has already sent a
   * final result this turn and no interim is outstanding, a flush settles after this much quiet.
   */
  finalizeGraceMs?: number;
}

export const DEEPGRAM_STT_DEFAULTS = {
  model: DEFAULT_MODELS.stt.deepgram,
  timeoutMs: 5_000,
  endpointingMs: 300,
  utteranceEndMs: 1_000,
  keepAliveMs: 5_000,
  finalizeGraceMs: 250,
} as const;

const PROVIDER = DEEPGRAM;
const RECONNECT_COOLDOWN_MS = 1_000;

type Settings = Required<Omit<DeepgramSpeechToTextOptions, 'apiKey' | 'baseUrl'>>;

export function createDeepgramSpeechToText(options: DeepgramSpeechToTextOptions): SpeechToText {
  const client = createDeepgramClient(options);
  const settings: Settings = {
    model: options.model ?? DEEPGRAM_STT_DEFAULTS.model,
    timeoutMs: options.timeoutMs ?? DEEPGRAM_STT_DEFAULTS.timeoutMs,
    endpointingMs: options.endpointingMs ?? DEEPGRAM_STT_DEFAULTS.endpointingMs,
    utteranceEndMs: options.utteranceEndMs ?? DEEPGRAM_STT_DEFAULTS.utteranceEndMs,
    keepAliveMs: options.keepAliveMs ?? DEEPGRAM_STT_DEFAULTS.keepAliveMs,
    finalizeGraceMs: options.finalizeGraceMs ?? DEEPGRAM_STT_DEFAULTS.finalizeGraceMs,
  };
  return {
    provider: PROVIDER,
    open: ({ language, model }) => new DeepgramTranscriptionStream(client, model ? { ...settings, model } : settings, language),
  };
}

/** One WebSocket, from the first write until it drops or the stream closes. */
interface Connection {
  socket: DeepgramListenSocket | null;
  open: boolean;
  /** Audio written while connecting, sent once the socket opens. */
  pending: Int16Array[];
  /** Settles when the socket opens; rejects when connecting failed. */
  ready: Promise<void>;
  /** Cancels the connection attempts when the stream closes first. */
  cancel: AbortController;
  /** Set once the connection is no longer used (dropped, failed or closed by us). */
  ended: boolean;
}

interface FlushWaiter {
  resolve(text: string): void;
  reject(error: unknown): void;
  deadline: ReturnType<typeof setTimeout>;
  grace: ReturnType<typeof setTimeout> | null;
  /** Set once the Finalize is on the wire: the grace period counts from then. */
  finalizeSent: boolean;
  detach(): void;
}

class DeepgramTranscriptionStream implements TranscriptionStream {
  onInterim: ((text: string) => void) | null = null;
  #conn: Connection | null = null;
  /** Final transcripts since the last flush. */
  #finals: string[] = [];
  /** An interim result arrived that no final result has replaced yet. */
  #interimOutstanding = false;
  /** A final result arrived since the last flush: the server is alive and has caught up once. */
  #finalSinceFlush = false;
  #waiter: FlushWaiter | null = null;
  /** Why the turn in progress lost audio, reported by the next flush. */
  #failure: ProviderError | null = null;
  #wroteSinceFlush = false;
  #lastSentAt = 0;
  #keepAlive: ReturnType<typeof setInterval> | null = null;
  /** After a failed connect, writes wait until then before trying again instead of hammering. */
  #reconnectNotBefore = 0;
  #connectFailure: ProviderError | null = null;
  #closed = false;

  constructor(
    private readonly client: DeepgramClient,
    private readonly settings: Settings,
    private readonly language: string,
  ) {}

  write(pcm: Int16Array): void {
    if (this.#closed || pcm.length === 0) return;
    this.#wroteSinceFlush = true;
    // Audio written while a refused connection cools down is lost; the next flush says why.
    if (!this.#conn && Date.now() < this.#reconnectNotBefore) {
      this.#failure ??= this.#connectFailure;
      return;
    }
    const conn = this.#conn ?? this.#connect();
    // A copy: the caller may reuse its buffer before the socket has sent this one.
    if (conn.open) this.#send(conn, pcm.slice());
    else conn.pending.push(pcm.slice());
  }

  flush(signal: AbortSignal): Promise<string> {
    if (this.#closed) return Promise.resolve('');
    if (this.#waiter) return Promise.reject(new Error('a flush is already waiting for its transcript'));
    const wrote = this.#wroteSinceFlush;
    this.#wroteSinceFlush = false;
    if (this.#failure) {
      const failure = this.#failure;
      this.#failure = null;
      // The cooldown keeps one refused turn from reconnecting at every frame; once that turn has
      // been told, the caller's next turn tries again at once. Kept for a second, it swallowed a
      // turn that began within it, and reported the old refusal for it.
      this.#reconnectNotBefore = 0;
      this.#finals = [];
      return Promise.reject(failure);
    }
    const conn = this.#conn;
    // Nothing new to finalise: what arrived already is the answer.
    if (!conn || (!wrote && !this.#interimOutstanding)) return Promise.resolve(this.#takeFinals());
    if (signal.aborted) return Promise.reject(signal.reason);

    return new Promise<string>((resolve, reject) => {
      const onAbort = () => this.#settle({ error: signal.reason });
      signal.addEventListener('abort', onAbort, { once: true });
      const deadline = setTimeout(() => {
        const error = new ProviderError(PROVIDER, 'timeout', `${PROVIDER} sent no final transcript within ${this.settings.timeoutMs} ms`);
        // A connection that leaves a Finalize unanswered is stuck: drop it, so the next turn
        // starts on a fresh one instead of failing the same way for the rest of the session.
        if (this.#conn === conn) this.#lose(conn, error);
        else this.#settle({ error });
      }, this.settings.timeoutMs);
      const waiter: FlushWaiter = {
        resolve,
        reject,
        deadline,
        grace: null,
        finalizeSent: false,
        detach: () => signal.removeEventListener('abort', onAbort),
      };
      this.#waiter = waiter;
      conn.ready.then(
        () => {
          if (this.#waiter !== waiter || conn.ended || !conn.socket) return;
          try {
            conn.socket.sendFinalize({ type: 'Finalize' });
          } catch (error) {
            this.#lose(conn, toProviderError(PROVIDER, error));
            return;
          }
          waiter.finalizeSent = true;
          this.#armGrace();
        },
        // #lose has already rejected the waiter.
        () => {},
      );
    });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#settle({ error: new DOMException('the transcription stream was closed', 'AbortError') });
    const conn = this.#conn;
    this.#conn = null;
    this.#stopKeepAlive();
    if (!conn) return;
    conn.ended = true;
    conn.cancel.abort();
    if (conn.open && conn.socket) {
      try {
        conn.socket.sendCloseStream({ type: 'CloseStream' });
      } catch {
        // Already closing: nothing left to tell Deepgram.
      }
    }
    conn.socket?.close();
  }

  // ── Connection ────────────────────────────────────────────────────────────────────────────

  #connect(): Connection {
    const conn: Connection = { socket: null, open: false, pending: [], ready: Promise.resolve(), cancel: new AbortController(), ended: false };
    this.#conn = conn;
    const open = async (signal: AbortSignal) => {
      conn.socket = await openListenSocket(this.client, { ...this.settings, language: this.language }, signal, {
        message: (message) => this.#receive(conn, message),
        lost: (error) => this.#lose(conn, error),
      });
    };
    conn.ready = withRetry(open, { provider: PROVIDER, timeoutMs: this.settings.timeoutMs, signal: conn.cancel.signal }).then(
      () => {
        conn.open = true;
        for (const pcm of conn.pending) this.#send(conn, pcm);
        conn.pending = [];
        this.#startKeepAlive();
      },
      (error: unknown) => {
        const failure = isAbortError(error) ? null : toProviderError(PROVIDER, error);
        // A refusal while the turn's flush waits ends that turn now: no cooldown for the next.
        if (failure && !this.#waiter) {
          this.#reconnectNotBefore = Date.now() + RECONNECT_COOLDOWN_MS;
          this.#connectFailure = failure;
        }
        this.#lose(conn, failure);
        throw error;
      },
    );
    // Failures reach the caller through flush; this copy only keeps Node from calling them unhandled.
    conn.ready.catch(() => {});
    return conn;
  }

  #send(conn: Connection, pcm: Int16Array): void {
    try {
      conn.socket?.sendMedia(bytesFromInt16(pcm));
      this.#lastSentAt = Date.now();
    } catch (error) {
      // The socket closed under us; its close event reports why, this only makes sure.
      this.#lose(conn, toProviderError(PROVIDER, error));
    }
  }

  /** The connection is gone: fail the flush waiting on it, or remember that this turn lost audio. */
  #lose(conn: Connection, error: ProviderError | null): void {
    if (conn.ended) return;
    conn.ended = true;
    if (this.#conn === conn) {
      this.#conn = null;
      this.#stopKeepAlive();
    }
    conn.socket?.close();
    if (!error) return;
    if (this.#waiter) this.#settle({ error });
    // A connection that drops between turns lost nothing: the next write just reconnects.
    else if (this.#wroteSinceFlush) this.#failure = error;
  }

  #startKeepAlive(): void {
    this.#stopKeepAlive();
    this.#lastSentAt = Date.now();
    const period = this.settings.keepAliveMs;
    this.#keepAlive = setInterval(() => {
      const conn = this.#conn;
      if (!conn?.open || !conn.socket || Date.now() - this.#lastSentAt < period) return;
      try {
        conn.socket.sendKeepAlive({ type: 'KeepAlive' });
        this.#lastSentAt = Date.now();
      } catch (error) {
        this.#lose(conn, toProviderError(PROVIDER, error));
      }
    }, Math.max(10, period / 2));
    this.#keepAlive.unref?.();
  }

  #stopKeepAlive(): void {
    if (this.#keepAlive) clearInterval(this.#keepAlive);
    this.#keepAlive = null;
  }

  // ── Results ───────────────────────────────────────────────────────────────────────────────

  #receive(conn: Connection, message: unknown): void {
    if (typeof message !== 'object' || message === null || typeof (message as { type?: unknown }).type !== 'string') {
      // The SDK hands over text it could not parse as is: nothing after it can be trusted.
      this.#lose(conn, new ProviderError(PROVIDER, 'bad_response', `${PROVIDER} sent a message that is not JSON`));
      return;
    }
    const result = message as { type: string; is_final?: boolean; speech_final?: boolean; from_finalize?: boolean; channel?: { alternatives?: Array<{ transcript?: unknown }> } };
    if (result.type !== 'Results') return;
    const transcript = result.channel?.alternatives?.[0]?.transcript;
    const text = typeof transcript === 'string' ? transcript.trim() : '';
    if (result.is_final) {
      if (text) this.#finals.push(text);
      this.#finalSinceFlush = true;
      this.#interimOutstanding = false;
    } else if (text) {
      this.#interimOutstanding = true;
      this.onInterim?.([...this.#finals, text].join(' '));
    }
    if (!this.#waiter) return;
    if (result.from_finalize || result.speech_final) this.#settle({ text: this.#takeFinals() });
    else this.#armGrace();
  }

  /** Starts (or restarts) the quiet period after which a flush settles without an answer. */
  #armGrace(): void {
    const waiter = this.#waiter;
    if (!waiter?.finalizeSent) return;
    if (waiter.grace) clearTimeout(waiter.grace);
    // A server that has said nothing since the last flush may be stuck: that one waits for the timeout.
    const settled = this.#finalSinceFlush && !this.#interimOutstanding;
    waiter.grace = settled ? setTimeout(() => this.#settle({ text: this.#takeFinals() }), this.settings.finalizeGraceMs) : null;
  }

  #takeFinals(): string {
    const text = this.#finals.join(' ');
    this.#finals = [];
    this.#finalSinceFlush = false;
    return text;
  }

  #settle(outcome: { text: string } | { error: unknown }): void {
    const waiter = this.#waiter;
    if (!waiter) return;
    this.#waiter = null;
    clearTimeout(waiter.deadline);
    if (waiter.grace) clearTimeout(waiter.grace);
    waiter.detach();
    if ('text' in outcome) waiter.resolve(outcome.text);
    else {
      this.#finals = [];
      this.#finalSinceFlush = false;
      waiter.reject(outcome.error);
    }
  }
}
