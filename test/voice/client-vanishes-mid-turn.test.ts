import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { useVoiceRig } from '../support/voice-server.ts';
import type { VoiceClient } from '../support/voice-client.ts';

const SLOW_ANSWER = `Sure thing. ${'Here is one more detail about the long answer you asked for. '.repeat(6).trim()}`;

// The network drops (no close frame) while the model is still streaming: the session must end
// cleanly — recorded, uncharged from then on, the provider request cancelled — and nothing may
// keep writing to the dead socket.
describe('the client vanishing in the middle of a turn', () => {
  const rig = useVoiceRig({
    tts: 'openai',
    openai: { msPerWord: 60 },
    rules: [
      { when: { lastRole: 'none' }, respond: { text: 'Hello!' } },
      // About a word every 80 ms: the answer takes seconds to stream.
      { when: { lastRole: 'user' }, respond: { text: SLOW_ANSWER, chunkDelayMs: 80 } },
    ],
  });
  let client: VoiceClient;
  const unhandled: unknown[] = [];
  const onUnhandled = (error: unknown) => unhandled.push(error);
  beforeAll(() => {
    process.on('unhandledRejection', onUnhandled);
    process.on('uncaughtException', onUnhandled);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(() => {
    process.off('unhandledRejection', onUnhandled);
    process.off('uncaughtException', onUnhandled);
  });

  it('ends the session as client_disconnected, cancels the model stream, and sends nothing more', { timeout: 15_000 }, async () => {
    // Every WebSocket send in this process, server side included: none may target a closed socket.
    const send = WebSocket.prototype.send;
    const sendsOnClosedSockets: number[] = [];
    const spy = vi.spyOn(WebSocket.prototype, 'send').mockImplementation(function (this: WebSocket, ...args: Parameters<WebSocket['send']>) {
      if (this.readyState !== WebSocket.OPEN) sendsOnClosedSockets.push(this.readyState);
      return send.apply(this, args);
    });

    client = await rig.connect({});
    const sessionId = (await client.waitFor('session_started')).session_id;
    await client.waitFor('agent_stopped_speaking');
    expect(rig.server.app.services.engine.activeSessions).toBe(1);

    client.send({ type: 'text', text: 'Tell me everything.' });
    const asked = await client.waitFor('transcript', (e) => e.role === 'user');
    // The answer is streaming and its first sentence is already being spoken.
    await client.waitFor('agent_started_speaking', (e) => client.events.indexOf(e) > client.events.indexOf(asked));
    const chat = rig.openai.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)!;
    expect(chat.state).toBe('open');
    client.socket.terminate();

    await vi.waitFor(() => expect(rig.server.app.services.engine.activeSessions).toBe(0), { timeout: 5_000 });
    // The model stream was cancelled, not left running to the end.
    await vi.waitFor(() => expect(chat.state).toBe('aborted'), { timeout: 2_000 });
    const sessions = await rig.server.request('GET', '/v1/sessions', { apiKey: rig.account.apiKey });
    expect(sessions.body.find((s: { id: string }) => s.id === sessionId)).toMatchObject({ status: 'ended', end_reason: 'client_disconnected' });

    // Nothing more is asked of the providers once the session is gone.
    const requestsAtEnd = rig.openai.requests.length;
    await new Promise((r) => setTimeout(r, 400));
    expect(rig.openai.requests.length).toBe(requestsAtEnd);
    expect(rig.openai.requests.every((r) => r.state !== 'open')).toBe(true);
    // The spy did see the server's sends (every audio frame the client got), none of them late.
    expect(spy.mock.calls.length).toBeGreaterThan(client.audioFrames.length);
    expect(sendsOnClosedSockets).toEqual([]);
    expect(unhandled).toEqual([]);
  });
});
