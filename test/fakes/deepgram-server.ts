// A fake Deepgram API: live transcription over WebSocket (`GET /v1/listen`) and Aura speech
// (`POST /v1/speak`), in Deepgram's own message shapes, so tests drive the real @deepgram/sdk.
// It finds utterances in the audio it receives by energy, in audio time (not wall time), so a
// test may stream faster than real time and still get the same events.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { type CountedFault, type Fault, faultFor, listen, pause, readBody, record, type RecordedRequest, sendJson, writeChunks } from './fake-http.ts';
import { pcmBytes, pcmFromBytes, speechLikeAudio, type Utterance, UtteranceTracker } from './synthetic-audio.ts';

/** Ways the live endpoint can misbehave; `times` limits them to the first connections. */
export interface ListenFault {
  /** Refuse the upgrade with this HTTP status. */
  refuseStatus?: number;
  /** Close the socket this long after it opened; 1006 cuts TCP with no close frame. */
  closeAfterMs?: number;
  closeCode?: number;
  /** Send text frames that are not JSON instead of results. */
  malformed?: boolean;
  /** Send nothing at all, Finalize included. */
  silent?: boolean;
  times?: number;
}

export interface FakeDeepgramOptions {
  /** When set, requests must carry `Authorization: Token <apiKey>`. */
  apiKey?: string;
  /** One per utterance. */
  transcripts?: string[];
  /** Used instead of `transcripts` when given. */
  transcribe?: (pcm: Int16Array, sampleRate: number) => string;
  listen?: ListenFault;
  speak?: CountedFault;
  /**
   * Real Deepgram may not answer a Finalize when it holds no audio; by default the fake answers
   * with an empty final result, false makes it stay quiet.
   */
  answerIdleFinalize?: boolean;
  /**
   * How long each of `transcripts` takes to say (ms of audio, in the same order). With it, a
   * Finalize sent in the middle of one (the client asking at a caller's pause) gives only the
   * words heard so far, as real Deepgram finalizes only what it has heard, and keeps the rest for
   * what follows; an utterance of at least half the length is the whole line. Unset:
   * every utterance is the whole next transcript, however much of it was heard.
   */
  transcriptAudioMs?: number[];
  /**
   * When each word of `transcripts` has been said (in the same order; used instead of
   * `transcriptAudioMs` when given): per line, the end of each word's sound in ms of the line's
   * speech, its pauses left out (a client sends no audio through much of a pause: its VAD says
   * the caller is silent). With it, every final result (a Finalize's, or the fake's own
   * endpointing at a pause) gives exactly the words whose sound had ended in the speech heard so
   * far (the line's earlier utterances, and the current one to the newest audio), and keeps the
   * rest for what follows; the line is done once its last word is given. A recogniser at a pause
   * inside a sentence hears only what was said. One connection at a time.
   */
  wordEndsMs?: number[][];
  /** Audio time between interim results while someone speaks. */
  interimEveryMs?: number;
  msPerWord?: number;
}

export interface FakeListenConnection {
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  audioBytes: number;
  /** JSON messages from the client (Finalize, KeepAlive, CloseStream). */
  received: Array<{ type: string }>;
  /** Messages the fake sent, parsed. */
  sent: unknown[];
  /** Close code once the socket closed; null while open. */
  closeCode: number | null;
}

export interface FakeDeepgram {
  /** Base URL for the SDK's `baseUrl` (http:, used for both REST and WebSocket). */
  url: string;
  connections: FakeListenConnection[];
  /** HTTP requests, the listen upgrades included. */
  requests: RecordedRequest[];
  transcripts: string[];
  setListenFault(fault: ListenFault | undefined): void;
  setSpeakFault(fault: CountedFault | undefined): void;
  close(): Promise<void>;
}

const DEEPGRAM_ERRORS: Record<number, { err_code: string; err_msg: string }> = {
  400: { err_code: 'Bad Request', err_msg: 'Bad Request: failed to process request.' },
  401: { err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.' },
  402: { err_code: 'ASR_PAYMENT_REQUIRED', err_msg: 'Project does not have enough credits for an ASR request.' },
  429: { err_code: 'TOO_MANY_REQUESTS', err_msg: 'Too many requests. Please try again later.' },
};

function errorBody(status: number) {
  return { ...(DEEPGRAM_ERRORS[status] ?? { err_code: 'INTERNAL_SERVER_ERROR', err_msg: 'Internal server error.' }), request_id: `fake-${status}` };
}

export async function startFakeDeepgram(options: FakeDeepgramOptions = {}): Promise<FakeDeepgram> {
  const requests: RecordedRequest[] = [];
  const connections: FakeListenConnection[] = [];
  const transcripts = options.transcripts ?? [];
  let listenFault = options.listen;
  let speakFault = options.speak;
  let listenCount = 0;
  let speakCount = 0;
  const authorized = (req: IncomingMessage) => options.apiKey === undefined || req.headers.authorization === `Token ${options.apiKey}`;
  // Taken by reference, as `transcripts` is: a caller may push a line and its length onto both as it goes.
  const lengths = options.transcriptAudioMs ?? null;
  const transcribe = (pcm: Int16Array, rate: number) => {
    if (options.transcribe) return options.transcribe(pcm, rate);
    lengths?.shift();
    return transcripts.shift() ?? '';
  };
  const wordEnds = options.wordEndsMs ?? null;
  /** The words of the next line whose sound ended `heardMs` into it; the line moves on by them. */
  const transcribeTimed =
    wordEnds && !options.transcribe
      ? (heardMs: number) => {
          const words = (transcripts[0] ?? '').split(/\s+/).filter(Boolean);
          const ends = wordEnds[0] ?? [];
          let said = 0;
          while (said < words.length && (ends[said] ?? Infinity) <= heardMs) said++;
          if (said >= words.length) {
            wordEnds.shift();
            return { text: transcripts.shift() ?? '', lineDone: true };
          }
          transcripts[0] = words.slice(said).join(' ');
          wordEnds[0] = ends.slice(said);
          return { text: words.slice(0, said).join(' '), lineDone: false };
        }
      : undefined;
  const peekTranscript = (pcm: Int16Array, rate: number) => (options.transcribe ? options.transcribe(pcm, rate) : (transcripts[0] ?? ''));
  const transcribeHeard =
    lengths && !options.transcribe && !wordEnds
      ? (durationMs: number) => {
          const words = (transcripts[0] ?? '').split(/\s+/).filter(Boolean);
          const length = lengths[0] ?? 0;
          if (durationMs >= 0.5 * length || words.length <= 1) {
            lengths.shift();
            return transcripts.shift() ?? '';
          }
          const heard = Math.min(words.length - 1, Math.max(1, Math.round((words.length * durationMs) / length)));
          transcripts[0] = words.slice(heard).join(' ');
          lengths[0] = length - durationMs;
          return words.slice(0, heard).join(' ');
        }
      : undefined;

  const handleHttp = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const raw = await readBody(req);
    let body: unknown = raw.toString('utf8');
    try {
      body = JSON.parse(body as string);
    } catch {
      // kept as text: the recording shows what arrived
    }
    const recorded = record(req, res, body, requests);
    if (!authorized(req)) return sendJson(res, 401, errorBody(401));
    if (req.method === 'POST' && url.pathname === '/v1/speak') {
      const fault = faultFor(speakFault, ++speakCount) ?? {};
      return answerSpeak(res, recorded, url.searchParams, body, fault, options.msPerWord);
    }
    sendJson(res, 404, { err_code: 'NOT_FOUND', err_msg: `No route for ${req.method} ${url.pathname}`, request_id: 'fake-404' });
  };

  const listening = await listen(handleHttp);
  const wss = new WebSocketServer({ noServer: true });

  listening.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const recorded: RecordedRequest = { method: 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, body: null, state: 'open' };
    requests.push(recorded);
    const refuse = (status: number) => {
      const body = JSON.stringify(errorBody(status));
      socket.end(`HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      recorded.state = 'finished';
    };
    if (url.pathname !== '/v1/listen') return refuse(404);
    if (!authorized(req)) return refuse(401);
    const fault = listenFault && (listenFault.times === undefined || listenCount < listenFault.times) ? listenFault : undefined;
    listenCount++;
    if (fault?.refuseStatus !== undefined) return refuse(fault.refuseStatus);
    wss.handleUpgrade(req, socket, head, (ws) => {
      recorded.state = 'finished';
      const connection: FakeListenConnection = { query: recorded.query, headers: req.headers, audioBytes: 0, received: [], sent: [], closeCode: null };
      connections.push(connection);
      serveListen(ws, connection, fault ?? {}, { ...options, transcribe, peekTranscript, transcribeHeard, transcribeTimed });
    });
  });

  return {
    url: `http://127.0.0.1:${listening.port}`,
    connections,
    requests,
    transcripts,
    setListenFault(fault) {
      listenFault = fault;
      listenCount = 0;
    },
    setSpeakFault(fault) {
      speakFault = fault;
      speakCount = 0;
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
      await listening.close();
    },
  };
}

// ── Live transcription ──────────────────────────────────────────────────────────────────────

interface ListenBehaviour extends FakeDeepgramOptions {
  transcribe: (pcm: Int16Array, rate: number) => string;
  peekTranscript: (pcm: Int16Array, rate: number) => string;
  /** A Finalize's transcript from the words heard so far (transcriptAudioMs). */
  transcribeHeard?: (durationMs: number) => string;
  /** Any final result's transcript from the words said by `heardMs` into the line (wordEndsMs). */
  transcribeTimed?: (heardMs: number) => { text: string; lineDone: boolean };
}

function serveListen(ws: WebSocket, connection: FakeListenConnection, fault: ListenFault, behaviour: ListenBehaviour): void {
  const query = connection.query;
  const sampleRate = Number(query.sample_rate ?? 16_000);
  const endpointing = query.endpointing === 'false' ? null : Number(query.endpointing ?? 300);
  const interims = query.interim_results === 'true';
  const vadEvents = query.vad_events === 'true';
  const utteranceEnd = query.utterance_end_ms !== undefined;
  const interimEveryMs = behaviour.interimEveryMs ?? 200;
  const requestId = `fake-req-${Math.random().toString(16).slice(2, 10)}`;
  const tracker = new UtteranceTracker(sampleRate, { hangoverMs: endpointing });
  let lastInterimAt = -Infinity;
  /** The current line's speech in its utterances before this one (wordEndsMs), ms. */
  let lineSpokenMs = 0;

  const send = (message: unknown) => {
    if (fault.silent || ws.readyState !== WebSocket.OPEN) return;
    connection.sent.push(message);
    ws.send(fault.malformed ? `{"type":"Results","channel":{"alternatives":[{"transcript":` : JSON.stringify(message));
  };
  const results = (utterance: { startMs: number; endMs: number }, transcript: string, flags: { is_final: boolean; speech_final: boolean; from_finalize: boolean }) => {
    send({
      type: 'Results',
      channel_index: [0, 1],
      duration: (utterance.endMs - utterance.startMs) / 1000,
      start: utterance.startMs / 1000,
      ...flags,
      channel: { alternatives: [{ transcript, confidence: transcript ? 0.98 : 0, words: wordsOf(transcript, utterance.startMs, utterance.endMs) }] },
      metadata: { request_id: requestId, model_info: { name: '2-general-nova', version: '2024-01-09.29447', arch: query.model ?? 'nova-3' }, model_uuid: 'fake-model-uuid' },
    });
  };
  const finish = (utterance: Utterance | null, fromFinalize: boolean) => {
    if (!utterance) {
      if (fromFinalize && behaviour.answerIdleFinalize !== false) results({ startMs: tracker.audioMs, endMs: tracker.audioMs }, '', { is_final: true, speech_final: false, from_finalize: true });
      return;
    }
    let transcript: string;
    if (behaviour.transcribeTimed) {
      const timed = behaviour.transcribeTimed(lineSpokenMs + tracker.audioMs - utterance.startMs);
      transcript = timed.text;
      lineSpokenMs = timed.lineDone ? 0 : lineSpokenMs + utterance.endMs - utterance.startMs;
    } else transcript = fromFinalize && behaviour.transcribeHeard ? behaviour.transcribeHeard(utterance.endMs - utterance.startMs) : behaviour.transcribe(utterance.pcm, sampleRate);
    results(utterance, transcript, { is_final: true, speech_final: !fromFinalize, from_finalize: fromFinalize });
    if (utteranceEnd) send({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: utterance.endMs / 1000 });
  };

  if (fault.closeAfterMs !== undefined) {
    const timer = setTimeout(() => {
      if (fault.closeCode === 1006) ws.terminate();
      else ws.close(fault.closeCode ?? 1011, 'NET-0000: The service has encountered an internal error.');
    }, fault.closeAfterMs);
    ws.on('close', () => clearTimeout(timer));
  }

  ws.on('message', (data, isBinary) => {
    if (isBinary) {
      const bytes = Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]);
      connection.audioBytes += bytes.length;
      for (const event of tracker.push(pcmFromBytes(bytes))) {
        if (event.type === 'start') {
          lastInterimAt = event.atMs;
          if (vadEvents) send({ type: 'SpeechStarted', channel: [0], timestamp: event.atMs / 1000 });
        } else if (event.type === 'voiced') {
          if (interims && event.atMs - lastInterimAt >= interimEveryMs) {
            lastInterimAt = event.atMs;
            const words = behaviour.peekTranscript(tracker.currentPcm(), sampleRate).split(/\s+/).filter(Boolean);
            // The prefix grows with the audio heard so far, as a recogniser's guesses do.
            const heard = Math.max(1, Math.min(words.length, Math.ceil(event.sinceStartMs / 250)));
            results({ startMs: event.atMs + 20 - event.sinceStartMs, endMs: event.atMs + 20 }, words.slice(0, heard).join(' '), { is_final: false, speech_final: false, from_finalize: false });
          }
        } else {
          finish(event.utterance, false);
        }
      }
      return;
    }
    let message: { type?: string };
    try {
      message = JSON.parse(data.toString()) as { type?: string };
    } catch {
      ws.close(1008, 'DATA-0000: The payload cannot be decoded as audio.');
      return;
    }
    connection.received.push({ ...message, type: String(message.type) });
    if (message.type === 'Finalize') {
      finish(tracker.finish(), true);
    } else if (message.type === 'CloseStream') {
      finish(tracker.finish(), false);
      send({ type: 'Metadata', transaction_key: 'deprecated', request_id: requestId, sha256: 'fake-sha256', created: new Date().toISOString(), duration: tracker.audioMs / 1000, channels: 1 });
      ws.close(1000);
    }
  });
  ws.on('close', (code) => {
    connection.closeCode = code;
  });
}

function wordsOf(transcript: string, startMs: number, endMs: number) {
  const words = transcript.split(/\s+/).filter(Boolean);
  const step = (endMs - startMs) / 1000 / Math.max(1, words.length);
  return words.map((punctuated, i) => ({
    word: punctuated.toLowerCase().replace(/[^\p{L}\p{N}']/gu, ''),
    start: startMs / 1000 + i * step,
    end: startMs / 1000 + (i + 1) * step,
    confidence: 0.98,
    punctuated_word: punctuated,
  }));
}

// ── Speech (Aura, REST) ─────────────────────────────────────────────────────────────────────

async function answerSpeak(res: ServerResponse, recorded: RecordedRequest, query: URLSearchParams, body: unknown, fault: Fault, msPerWord?: number): Promise<void> {
  if (fault.hangMs !== undefined && !(await pause(fault.hangMs, res))) return;
  if (fault.status !== undefined) return sendJson(res, fault.status, errorBody(fault.status));
  const text = (body as { text?: unknown } | null)?.text;
  if (typeof text !== 'string' || text.length === 0) return sendJson(res, 400, { err_code: 'Bad Request', err_msg: 'Request body must contain a "text" field.', request_id: 'fake-400' });
  if (query.get('encoding') !== 'linear16' || (query.get('container') ?? 'wav') !== 'none') {
    return sendJson(res, 400, { err_code: 'Bad Request', err_msg: 'The fake speaks linear16 with container=none only.', request_id: 'fake-400' });
  }
  if (fault.garbage) {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
    return;
  }
  const sampleRate = Number(query.get('sample_rate') ?? 24_000);
  const bytes = pcmBytes(speechLikeAudio(text, sampleRate, msPerWord));
  const chunks: Buffer[] = [];
  // Odd chunk sizes: every boundary splits a sample, as a real network may.
  for (let at = 0; at < bytes.length; at += 3_333) chunks.push(bytes.subarray(at, at + 3_333));
  res.writeHead(200, { 'content-type': 'audio/l16', 'dg-model-name': query.get('model') ?? 'aura-2-thalia-en', 'dg-request-id': 'fake-speak', 'transfer-encoding': 'chunked' });
  res.flushHeaders();
  await writeChunks(res, recorded, chunks, fault);
}
