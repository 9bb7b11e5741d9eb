import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount, startTestServer, type TestServer } from '../support/server.ts';
import { padWithSilence, synthesizeSpeech } from '../support/speech.ts';
import { connectVoice, wsUrl, type VoiceClient } from '../support/voice-client.ts';

// A voice session ends by itself when nobody is there (idle: no speech heard and no message
// from the client, pings aside) and when it reaches the longest a session may last. The client
// is told why in session_ended, and the session list says the same.

const FRAME_MS = 100;
const SILENCE = new Int16Array((16_000 * FRAME_MS) / 1000);

/** What a live call's client does all the time: audio frames (silence here) and pings, until the socket closes. */
function keepTheLineOpen(client: VoiceClient): () => void {
  let frames = 0;
  const timer = setInterval(() => {
    if (client.socket.readyState !== client.socket.OPEN) return;
    client.socket.send(Buffer.from(SILENCE.buffer));
    if (++frames % 3 === 0) client.send({ type: 'ping' });
  }, FRAME_MS);
  return () => clearInterval(timer);
}

/** Sends a message that does something (interrupt: no model, no speech) every 300 ms for `forMs`. */
async function keepSendingMessages(client: VoiceClient, forMs: number): Promise<void> {
  const until = performance.now() + forMs;
  while (performance.now() < until && client.socket.readyState === client.socket.OPEN) {
    client.send({ type: 'interrupt' });
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

async function endReasonListed(server: TestServer, apiKey: string, sessionId: string): Promise<string | null> {
  const sessions = await server.request('GET', '/v1/sessions', { apiKey });
  return sessions.body.find((s: { id: string }) => s.id === sessionId)?.end_reason ?? null;
}

describe('a session nobody speaks or writes to for VOXFLOW_IDLE_END_SECONDS (1 s here) ends as idle', () => {
  let server: TestServer;
  let account: Awaited<ReturnType<typeof createAccount>>;
  const stops: Array<() => void> = [];

  beforeAll(async () => {
    // The real voice activity model: only what it hears as speech counts as the caller being there.
    server = await startTestServer({ engine: { idleEndSeconds: 1, maxSessionSeconds: 0 } }, { voice: true });
    account = await createAccount(server);
    await vi.waitFor(() => expect(server.app.services.engine.voiceReady).toBe(true), { timeout: 15_000, interval: 50 });
  });
  afterAll(async () => {
    for (const stop of stops) stop();
    await server?.close();
  });

  const open = async () => {
    const client = await connectVoice(wsUrl(server.url, '/ws?mode=assistant'), { 'x-service-key': account.apiKey });
    stops.push(() => client.close());
    const started = await client.waitFor('session_started');
    return { client, startedAt: performance.now(), sessionId: started.session_id as string };
  };

  it('silence frames and pings do not keep it going: it ends with reason idle, told to the client and recorded', { timeout: 15_000 }, async () => {
    const { client, startedAt, sessionId } = await open();
    stops.push(keepTheLineOpen(client));
    const ended = await client.waitFor('session_ended', undefined, 5_000);
    const after = performance.now() - startedAt;
    expect(ended.reason).toBe('idle');
    expect(after).toBeGreaterThanOrEqual(950);
    expect(after).toBeLessThan(3_000);
    expect((await client.closed).code).toBe(1000);
    expect(await endReasonListed(server, account.apiKey, sessionId)).toBe('idle');
  });

  it('messages keep it going; it ends as idle about a second after the last one', { timeout: 15_000 }, async () => {
    const { client } = await open();
    stops.push(keepTheLineOpen(client));
    await keepSendingMessages(client, 2_500);
    expect(client.ofType('session_ended')).toEqual([]);
    const lastMessageAt = performance.now();
    expect((await client.waitFor('session_ended', undefined, 5_000)).reason).toBe('idle');
    expect(performance.now() - lastMessageAt).toBeGreaterThanOrEqual(600);
  });

  it('a caller speaking for longer than the idle time keeps it going; it ends as idle once they have been quiet a second', { timeout: 20_000 }, async () => {
    const speech = padWithSilence(await synthesizeSpeech('I would like to book a table for four people on Friday evening, somewhere near the river please.'), 300, 0);
    expect(speech.length / 16).toBeGreaterThan(2_500);
    const { client, sessionId } = await open();
    await client.sendAudio(speech);
    await client.waitFor('user_started_speaking');
    // Longer than the idle time, and the session is still there.
    expect(client.ofType('session_ended')).toEqual([]);
    const spokeUntil = performance.now();
    stops.push(keepTheLineOpen(client));
    expect((await client.waitFor('session_ended', undefined, 5_000)).reason).toBe('idle');
    expect(performance.now() - spokeUntil).toBeGreaterThanOrEqual(900);
    expect(await endReasonListed(server, account.apiKey, sessionId)).toBe('idle');
  });
});

describe('a session ends at VOXFLOW_MAX_SESSION_SECONDS (1.5 s here), however busy it is', () => {
  let server: TestServer;
  let account: Awaited<ReturnType<typeof createAccount>>;

  beforeAll(async () => {
    server = await startTestServer({ engine: { maxSessionSeconds: 1.5, idleEndSeconds: 1 } });
    account = await createAccount(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('ends with reason max_duration, told to the client and recorded, over the engine router and a hosted session token alike', { timeout: 15_000 }, async () => {
    const started = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: {} });
    const runUntilEnded = async (client: VoiceClient) => {
      const hello = await client.waitFor('session_started');
      const startedAt = performance.now();
      // Busy all along: never idle.
      void keepSendingMessages(client, 5_000);
      const ended = await client.waitFor('session_ended', undefined, 5_000);
      return { sessionId: hello.session_id as string, reason: ended.reason, lasted: performance.now() - startedAt, closed: await client.closed };
    };
    const ends = await Promise.all([
      connectVoice(wsUrl(server.url, '/ws?mode=assistant'), { 'x-service-key': account.apiKey }).then(runUntilEnded),
      connectVoice(started.body.ws_url).then(runUntilEnded),
    ]);
    for (const end of ends) {
      expect(end.reason).toBe('max_duration');
      expect(end.lasted).toBeGreaterThanOrEqual(1_400);
      expect(end.lasted).toBeLessThan(3_000);
      expect(end.closed.code).toBe(1000);
      expect(await endReasonListed(server, account.apiKey, end.sessionId)).toBe('max_duration');
    }
  });
});
