import { describe, expect, it } from 'vitest';
import { DRIVEN_TURNS_BURST, DRIVEN_TURNS_PER_SECOND } from '../../../server/engine/session.ts';
import { chatRequests, useVoiceRig, type VoiceRigHandle } from '../../support/voice-server.ts';
import { connectVoice, wsUrl, type VoiceClient } from '../../support/voice-client.ts';

// Each typed turn starts a model request and speech the account pays for, and so does each
// simulate_tool call that moves the flow (its speech cue). A client that floods them (the issue:
// 6 s of typed turns every 50 ms made 112 model and 104 speech requests on a 2-cent session) gets
// 5 at once and then 1 a second; the rest are dropped with a `rate_limited` error and cost nothing.

/** 1.5 s of messages: five times the burst, and the bucket refills only once or twice meanwhile. */
const MESSAGES = 30;
const EVERY_MS = 50;
/**
 * What the bucket lets through in a flood that lasted `ms` (1.5 s on a quiet machine, longer when
 * timers run late on a busy one): the burst, what refills meanwhile, and one for timing.
 */
const mostAccepted = (ms: number) => DRIVEN_TURNS_BURST + Math.ceil((ms / 1000) * DRIVEN_TURNS_PER_SECOND) + 1;

function speechRequests(rig: VoiceRigHandle): number {
  return rig.openai.requests.filter((r) => r.path === '/v1/audio/speech').length;
}

/** Sends `message(i)` MESSAGES times, every 50 ms; resolves with how many were sent and over how long (ms). */
async function flood(client: VoiceClient, message: (i: number) => unknown): Promise<{ sent: number; ms: number }> {
  let sent = 0;
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      client.send(message(sent++));
      if (sent === MESSAGES) {
        clearInterval(timer);
        resolve();
      }
    }, EVERY_MS);
  });
  const ms = performance.now() - started;
  // Every message has been answered once a ping sent after them is.
  client.send({ type: 'ping' });
  await client.waitFor('pong');
  return { sent, ms };
}

describe('typed turns and simulate_tool are rate-limited per session', () => {
  const rig = useVoiceRig({
    stt: 'none',
    tts: 'openai',
    openai: { msPerWord: 30 },
    rules: [
      { when: { lastRole: 'none' }, respond: { text: 'Hello.' } },
      { when: { lastRole: 'user', lastUserText: /^flood/ }, respond: { text: 'Got it.' } },
      { when: { lastRole: 'user', lastUserText: /after the flood/ }, respond: { text: 'Still here after all that.' } },
    ],
  });

  it('a flood of typed turns reaches the model and the voice at most the bucket’s worth; the rest are refused with rate_limited', { timeout: 20_000 }, async () => {
    const client = await rig.connect({});
    await client.waitFor('agent_stopped_speaking');
    const modelBefore = chatRequests(rig).length;
    const speechBefore = speechRequests(rig);

    const { sent, ms } = await flood(client, (i) => ({ type: 'text', text: `flood ${i}` }));

    const refused = client.ofType('error').filter((e) => e.code === 'rate_limited');
    const accepted = client.ofType('transcript').filter((e) => e.role === 'user' && e.text.startsWith('flood'));
    expect(accepted.length).toBeGreaterThanOrEqual(DRIVEN_TURNS_BURST);
    expect(accepted.length).toBeLessThanOrEqual(mostAccepted(ms));
    expect(accepted.length + refused.length).toBe(sent);
    expect(refused[0]).toMatchObject({ fatal: false, message: expect.stringMatching(/5 at once, then 1 a second/) });
    // A refused turn is not heard: only the accepted ones reached the model or the voice.
    expect(chatRequests(rig).length - modelBefore).toBeLessThanOrEqual(accepted.length);
    expect(speechRequests(rig) - speechBefore).toBeLessThanOrEqual(accepted.length);
    expect(chatRequests(rig).at(-1)!.messages.filter((m) => m.role === 'user').length).toBeLessThanOrEqual(accepted.length);

    // The session goes on: once the bucket has refilled a little, the next turn is answered.
    await new Promise((resolve) => setTimeout(resolve, 1_100 / DRIVEN_TURNS_PER_SECOND));
    client.send({ type: 'text', text: 'Are you there after the flood?' });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Still here after all that.');
    expect(client.socket.readyState).toBe(client.socket.OPEN);
  });

  it('a flood of simulate_tool calls from the studio moves the flow at most the bucket’s worth of times', { timeout: 20_000 }, async () => {
    const client = rig.track(await connectVoice(wsUrl(rig.server.url, `/ws?mode=flow&program_id=${rig.flowId}&access_token=${rig.account.jwt}`)));
    await client.waitFor('agent_stopped_speaking');
    const speechBefore = speechRequests(rig);

    // begin_game and play_again walk the game round and round; each accepted call speaks its cue.
    const { sent, ms } = await flood(client, (i) => (i % 3 === 0 ? { type: 'simulate_tool', name: 'begin_game', arguments: { secret_thing: 'x' } } : i % 3 === 1 ? { type: 'simulate_tool', name: 'guess_correct' } : { type: 'simulate_tool', name: 'play_again' }));

    const refused = client.ofType('error').filter((e) => e.code === 'rate_limited');
    const handled = client.ofType('tool_call');
    expect(handled.length).toBeGreaterThanOrEqual(DRIVEN_TURNS_BURST);
    expect(handled.length).toBeLessThanOrEqual(mostAccepted(ms));
    expect(handled.length + refused.length).toBe(sent);
    expect(speechRequests(rig) - speechBefore).toBeLessThanOrEqual(handled.length);
  });
});
