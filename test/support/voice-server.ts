// A server wired to the protocol-faithful provider fakes, for voice scenario tests.
import { afterAll, beforeAll } from 'vitest';
import { startFakeDeepgram, type FakeDeepgram, type FakeDeepgramOptions } from '../fakes/deepgram-server.ts';
import { startFakeOpenAI, type ChatRule, type FakeOpenAI, type FakeOpenAIOptions } from '../fakes/openai-server.ts';
import type { ConfigInput } from '../../server/config.ts';
import { createAccount, createFlow, startTestServer, type TestServer, type TestServerOptions } from './server.ts';
import { connectVoice, type VoiceClient } from './voice-client.ts';

export interface VoiceRig {
  server: TestServer;
  openai: FakeOpenAI;
  deepgram: FakeDeepgram;
  account: Awaited<ReturnType<typeof createAccount>>;
  flowId: string;
  close(): Promise<void>;
}

export interface VoiceRigOptions {
  rules?: ChatRule[];
  transcripts?: string[];
  openai?: FakeOpenAIOptions;
  deepgram?: FakeDeepgramOptions;
  /** Which STT the server uses: the Deepgram fake (default), OpenAI's, or none. */
  stt?: 'deepgram' | 'openai' | 'none';
  llm?: 'openai' | 'none';
  tts?: 'flite' | 'openai' | 'deepgram';
  config?: ConfigInput;
  /** Provider timeouts (config.providers.<kind>.timeoutMs), so a hung provider fails fast. */
  timeoutsMs?: { stt?: number; llm?: number; tts?: number };
  /** Length of a billed minute. */
  minuteMs?: number;
  /** WebRTC peer timeouts (buildApp's webrtc options). */
  webrtc?: TestServerOptions['webrtc'];
}

/** The server with the real voice stack (Silero, flite) and the provider fakes, with an account and the guessing game. */
export async function startVoiceRig(options: VoiceRigOptions = {}): Promise<VoiceRig> {
  const openai = await startFakeOpenAI({ rules: options.rules, transcripts: options.stt === 'openai' ? options.transcripts : undefined, ...options.openai });
  const deepgram = await startFakeDeepgram({ transcripts: options.stt !== 'openai' ? options.transcripts : undefined, ...options.deepgram });
  const stt = options.stt ?? 'deepgram';
  const timeouts = options.timeoutsMs ?? {};
  const server = await startTestServer(
    {
      ...options.config,
      providers: {
        stt: {
          ...(stt === 'deepgram' ? { provider: 'deepgram', apiKey: 'dg-test', baseUrl: deepgram.url } : stt === 'openai' ? { provider: 'openai', apiKey: 'sk-test', baseUrl: openai.url } : { provider: 'none' }),
          timeoutMs: timeouts.stt,
        },
        llm: { ...((options.llm ?? 'openai') === 'openai' ? { provider: 'openai', apiKey: 'sk-test', baseUrl: openai.url } : { provider: 'none' }), timeoutMs: timeouts.llm },
        tts: {
          ...(options.tts === 'openai'
            ? { provider: 'openai', apiKey: 'sk-test', baseUrl: openai.url }
            : options.tts === 'deepgram'
              ? { provider: 'deepgram', apiKey: 'dg-test', baseUrl: deepgram.url }
              : { provider: 'flite' }),
          timeoutMs: timeouts.tts,
        },
      },
    },
    { minuteMs: options.minuteMs, webrtc: options.webrtc, voice: true },
  );
  const account = await createAccount(server);
  const flowId = await createFlow(server, account.apiKey);
  return {
    server,
    openai,
    deepgram,
    account,
    flowId,
    async close() {
      await server.close();
      await openai.close();
      await deepgram.close();
    },
  };
}

/** A voice rig for a test file or describe block: the rig itself, and sessions that close with it. */
export interface VoiceRigHandle extends VoiceRig {
  /** Starts a session as a backend does (connectSession); the client is closed after the tests. */
  connect(body?: Record<string, unknown>): Promise<VoiceClient>;
  /** Closes `client` after the tests, with the clients `connect` opened. */
  track(client: VoiceClient): VoiceClient;
}

/**
 * How long a rig may take to start (servers, fakes, an account, a flow): seconds when the machine
 * is quiet, far longer beside a second test run. A wait, not a measure of speed.
 */
export const RIG_START_TIMEOUT_MS = 120_000;

/**
 * Starts a voice rig before the tests of the enclosing file or describe block and closes it, with
 * every client it connected, after them. The handle stands for the rig inside tests and hooks.
 */
export function useVoiceRig(options: VoiceRigOptions = {}): VoiceRigHandle {
  let started: VoiceRig | undefined;
  let closing: Promise<void> | undefined;
  const clients: VoiceClient[] = [];
  const rig = (): VoiceRig => {
    if (!started) throw new Error('useVoiceRig: the rig is used outside a test or hook, or it failed to start');
    return started;
  };
  let starting: Promise<VoiceRig> | undefined;
  beforeAll(async () => {
    starting = startVoiceRig(options);
    started = await starting;
  }, RIG_START_TIMEOUT_MS);
  const close = (): Promise<void> => {
    for (const client of clients.splice(0)) client.close();
    // A start the hook gave up waiting for still finishes: it is closed too, once it has.
    closing ??= (async () => (started ?? (await starting?.catch(() => undefined)))?.close())();
    return closing;
  };
  afterAll(close, RIG_START_TIMEOUT_MS);
  const handle: VoiceRigHandle = {
    get server() {
      return rig().server;
    },
    get openai() {
      return rig().openai;
    },
    get deepgram() {
      return rig().deepgram;
    },
    get account() {
      return rig().account;
    },
    get flowId() {
      return rig().flowId;
    },
    close,
    async connect(body) {
      return handle.track(await connectSession(rig(), body));
    },
    track(client) {
      clients.push(client);
      return client;
    },
  };
  return handle;
}

/** The model's side of the guessing game, as rules: a script the fake follows. */
export const GUESSING_GAME_RULES: ChatRule[] = [
  { when: { lastRole: 'none', toolsOffered: ['begin_game'] }, respond: { text: "Welcome to ten questions! Tell me when you're ready." } },
  { when: { lastRole: 'user', lastUserText: /ready/i, toolsOffered: ['begin_game'] }, respond: { toolCalls: [{ name: 'begin_game', arguments: { secret_thing: 'a cat', questions_asked: '0' } }] } },
  { when: { lastRole: 'tool', toolsOffered: ['record_answer'], systemIncludes: 'Questions asked so far: 0.' }, respond: { text: 'Go ahead and ask your first question.' } },
  { when: { lastRole: 'user', lastUserText: /animal/i, toolsOffered: ['record_answer'] }, respond: { text: 'Yes, it is an animal.', toolCalls: [{ name: 'record_answer', arguments: { last_answer: 'yes', questions_asked: '1' } }] } },
  { when: { lastRole: 'tool', toolsOffered: ['record_answer'] }, respond: { text: 'What is your next question?' } },
  { when: { lastRole: 'user', lastUserText: /cat/i, toolsOffered: ['guess_correct'] }, respond: { toolCalls: [{ name: 'guess_correct', arguments: {} }] } },
  { when: { lastRole: 'user', lastUserText: /give up|out of/i, toolsOffered: ['out_of_questions'] }, respond: { toolCalls: [{ name: 'out_of_questions', arguments: {} }] } },
  { when: { lastRole: 'tool', toolsOffered: ['play_again'], systemIncludes: 'guessed the secret thing' }, respond: { text: 'You got it, it was a cat! Want to play again?' } },
  { when: { lastRole: 'tool', toolsOffered: ['play_again'] }, respond: { text: 'The secret thing was a cat. Want to play again?' } },
  { when: { lastRole: 'user', lastUserText: /again|yes/i, toolsOffered: ['play_again'] }, respond: { toolCalls: [{ name: 'play_again', arguments: {} }] } },
  { when: { lastRole: 'tool', toolsOffered: ['begin_game'] }, respond: { text: "Let's play again. Tell me when you're ready." } },
];

/** Starts a session the way a backend does (POST /v1/sessions with the API key) and connects to its ws_url. */
export async function connectSession(rig: VoiceRig, body: Record<string, unknown> = { flow_id: rig.flowId }): Promise<VoiceClient> {
  const started = await rig.server.request('POST', '/v1/sessions', { apiKey: rig.account.apiKey, body });
  if (started.status !== 200) throw new Error(`session start failed: ${started.status} ${started.text}`);
  return connectVoice(started.body.ws_url);
}

/** The chat-completion requests the model fake received, in order. */
export function chatRequests(rig: VoiceRig): Array<{ messages: Array<{ role: string; content?: unknown; tool_calls?: unknown[]; tool_call_id?: string }>; tools?: Array<{ function: { name: string } }> }> {
  return rig.openai.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body as never);
}

/** Names of the tools a chat request offered. */
export function toolsOffered(request: { tools?: Array<{ function: { name: string } }> }): string[] {
  return (request.tools ?? []).map((t) => t.function.name);
}
