// A voice client over a real WebSocket, as an app would be: it sends PCM16 16 kHz in ~100 ms
// chunks paced in real time (or faster), sends control messages, and records every event and
// every agent audio frame it receives, so tests can assert what a user would notice.
import WebSocket from 'ws';
import type { ServerEvent, ServerEventType } from '../../server/protocol/events.ts';
import { padWithSilence, synthesizeSpeech } from './speech.ts';

export type AnyEvent = ServerEvent & Record<string, any>;

export interface VoiceClient {
  socket: WebSocket;
  events: AnyEvent[];
  /** Agent audio frames received, in order, with the index of the last event before each. */
  audioFrames: Array<{ samples: number; afterEvent: number }>;
  closed: Promise<{ code: number; reason: string }>;
  send(message: unknown): void;
  sendAudio(pcm: Int16Array, options?: { chunkMs?: number; speed?: number }): Promise<void>;
  /** Synthesizes `text` with flite and speaks it, followed by silence long enough to end the turn. */
  speak(text: string, options?: { speed?: number; silenceAfterMs?: number }): Promise<void>;
  waitFor<T extends ServerEventType>(type: T, predicate?: (event: Extract<ServerEvent, { type: T }> & Record<string, any>) => boolean, timeoutMs?: number): Promise<Extract<ServerEvent, { type: T }> & Record<string, any>>;
  /** Events of a type seen so far. */
  ofType<T extends ServerEventType>(type: T): Array<Extract<ServerEvent, { type: T }> & Record<string, any>>;
  close(): void;
}

/** Resolves once the socket is open; rejects with the HTTP status when the upgrade is refused. */
export function connectVoice(url: string, headers: Record<string, string> = {}): Promise<VoiceClient> {
  const socket = new WebSocket(url, { headers });
  const events: AnyEvent[] = [];
  const audioFrames: VoiceClient['audioFrames'] = [];
  const waiters = new Set<() => void>();
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));

  socket.on('message', (data, isBinary) => {
    const bytes = data as Buffer;
    if (isBinary) audioFrames.push({ samples: bytes.length / 2, afterEvent: events.length - 1 });
    else events.push(JSON.parse(bytes.toString('utf8')) as AnyEvent);
    for (const wake of waiters) wake();
  });

  const client: VoiceClient = {
    socket,
    events,
    audioFrames,
    closed,
    send(message) {
      socket.send(typeof message === 'string' ? message : JSON.stringify(message));
    },
    async sendAudio(pcm, options = {}) {
      const chunk = Math.round((16_000 * (options.chunkMs ?? 100)) / 1000);
      const speed = options.speed ?? 1;
      const started = performance.now();
      for (let at = 0, n = 0; at < pcm.length; at += chunk, n++) {
        if (socket.readyState !== socket.OPEN) return;
        const part = pcm.subarray(at, Math.min(pcm.length, at + chunk));
        socket.send(Buffer.from(part.buffer, part.byteOffset, part.byteLength));
        const due = started + ((n + 1) * (options.chunkMs ?? 100)) / speed;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
    },
    async speak(text, options = {}) {
      const speech = padWithSilence(await synthesizeSpeech(text), 200, options.silenceAfterMs ?? 900);
      await client.sendAudio(speech, { speed: options.speed ?? 1 });
    },
    waitFor(type, predicate, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        let seen = 0;
        const check = () => {
          for (; seen < events.length; seen++) {
            const event = events[seen]!;
            if (event.type === type && (!predicate || predicate(event as never))) {
              cleanup();
              resolve(event as never);
              return;
            }
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          const errors = events.filter((e) => e.type === 'error').map((e) => `${e.code}: ${e.message}`);
          reject(new Error(`no ${type} event within ${timeoutMs} ms; events: ${events.map((e) => e.type).join(', ')}${errors.length > 0 ? `; errors: ${errors.join(' | ')}` : ''}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    ofType(type) {
      return events.filter((e) => e.type === type) as never;
    },
    close() {
      socket.close();
    },
  };

  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(client));
    socket.once('unexpected-response', (request, response) => {
      reject(Object.assign(new Error(`upgrade refused with ${response.statusCode}`), { status: response.statusCode }));
      // With this listener set, ws leaves the connection to us: an open one would hold up the server's close.
      response.resume();
      request.destroy();
    });
    socket.once('error', (error) => reject(error));
  });
}

/** The ws:// form of a server URL. */
export function wsUrl(httpUrl: string, path: string): string {
  return httpUrl.replace(/^http/, 'ws') + path;
}
