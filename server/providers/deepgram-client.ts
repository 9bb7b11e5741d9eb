// One place that builds the @deepgram/sdk client for the live STT and Aura TTS providers:
// REST retries off (withRetry owns them) and the key always given, so the SDK never falls back
// to reading DEEPGRAM_API_KEY from the environment. Sockets turn their reconnects off per
// connection (`reconnectAttempts: 0`), where the SDK takes that setting.
import { DeepgramClient } from '@deepgram/sdk';

export interface DeepgramClientOptions {
  apiKey: string;
  /**
   * One http(s) URL for REST and WebSocket alike (the SDK derives ws from it); Deepgram's own
   * endpoints by default. A ws:// URL would break REST calls.
   */
  baseUrl?: string;
}

export type DeepgramListenSocket = Awaited<ReturnType<DeepgramClient['listen']['v1']['connect']>>;

export function createDeepgramClient(options: DeepgramClientOptions): DeepgramClient {
  return new DeepgramClient({
    apiKey: options.apiKey,
    ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
    maxRetries: 0,
  });
}
