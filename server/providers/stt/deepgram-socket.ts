// Opening one live-transcription WebSocket through the Deepgram SDK, and turning what the SDK
// reports (ws error strings, close codes) into ProviderErrors.
import type { DeepgramClient } from '@deepgram/sdk';
import type { DeepgramListenSocket } from '../deepgram-client.ts';
import { toProviderError } from '../retry.ts';
import { ENGINE_SAMPLE_RATE, ProviderError } from '../types.ts';

export const DEEPGRAM = 'deepgram';

export interface ListenSettings {
  model: string;
  /** BCP 47; Deepgram's default language when empty. */
  language: string;
  endpointingMs: number;
  utteranceEndMs: number;
  timeoutMs: number;
}

export interface ListenEvents {
  /** A parsed message, or the raw text when the SDK could not parse it. */
  message(message: unknown): void;
  /** The socket was lost after it had opened. */
  lost(error: ProviderError): void;
}

/**
 * Resolves with the socket once it is open; rejects with why it could not open, or with the
 * signal's reason when the signal fires first (the socket is closed then).
 */
export async function openListenSocket(client: DeepgramClient, settings: ListenSettings, signal: AbortSignal, events: ListenEvents): Promise<DeepgramListenSocket> {
  const socket = await client.listen.v1.connect({
    model: settings.model,
    ...(settings.language ? { language: settings.language } : {}),
    encoding: 'linear16',
    sample_rate: ENGINE_SAMPLE_RATE,
    channels: 1,
    interim_results: 'true',
    punctuate: 'true',
    smart_format: 'true',
    vad_events: 'true',
    endpointing: settings.endpointingMs,
    utterance_end_ms: settings.utteranceEndMs,
    // One retry policy: ours. The SDK would otherwise reconnect up to 30 times on its own.
    reconnectAttempts: 0,
    connectionTimeoutInSeconds: Math.ceil(settings.timeoutMs / 1000) + 1,
  });
  signal.throwIfAborted();
  return new Promise<DeepgramListenSocket>((resolve, reject) => {
    // 'done' once this socket is given up: its late events (the SDK's close() fires one
    // synchronously) must not reach a connection that a retry has moved on from.
    let phase: 'opening' | 'open' | 'done' = 'opening';
    const failOpening = (error: unknown) => {
      if (phase !== 'opening') return;
      phase = 'done';
      signal.removeEventListener('abort', onAbort);
      socket.close();
      reject(error);
    };
    const onAbort = () => failOpening(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const lose = (error: ProviderError) => {
      phase = 'done';
      events.lost(error);
    };
    // The socket keeps one handler per event (`on` replaces), so each handler covers both
    // phases: while opening it settles this promise, afterwards it reports a lost connection.
    socket.on('open', () => {
      if (phase !== 'opening') return;
      phase = 'open';
      signal.removeEventListener('abort', onAbort);
      resolve(socket);
    });
    socket.on('error', (error) => {
      if (phase === 'opening') failOpening(upgradeError(error));
      else if (phase === 'open') lose(new ProviderError(DEEPGRAM, 'network', `${DEEPGRAM} connection failed: ${error.message}`, true, { cause: error }));
    });
    socket.on('close', (event) => {
      // A refused upgrade reports its close just before the error that holds the status.
      if (phase === 'opening') queueMicrotask(() => failOpening(new ProviderError(DEEPGRAM, 'network', `${DEEPGRAM} closed the connection while opening (${event.code})`)));
      else if (phase === 'open') lose(closeError(event.code, event.reason));
    });
    socket.on('message', (message) => {
      if (phase === 'open') events.message(message);
    });
    socket.connect();
  });
}

/** A refused upgrade arrives as ws's "Unexpected server response: 401": keep the status. */
function upgradeError(error: Error): ProviderError {
  const status = /Unexpected server response: (\d{3})/.exec(error.message)?.[1];
  return toProviderError(DEEPGRAM, status ? Object.assign(new Error(error.message), { status: Number(status) }) : error);
}

function closeError(code: number, reason: string): ProviderError {
  const why = `${DEEPGRAM} closed the connection (${code}${reason ? `: ${reason}` : ''})`;
  // 1011 is Deepgram's NET-0000/NET-0001; 1008 and 1007 mean it refused what we sent.
  if (code === 1011) return new ProviderError(DEEPGRAM, 'server', why);
  if (code === 1008 || code === 1007 || code === 1003) return new ProviderError(DEEPGRAM, 'bad_request', why);
  return new ProviderError(DEEPGRAM, 'network', why);
}
