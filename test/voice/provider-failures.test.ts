import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FALLBACK_LINE } from '../../server/engine/session.ts';
import type { ChatRule } from '../fakes/openai-server.ts';
import { synthesizeSpeech } from '../support/speech.ts';
import { useVoiceRig, type VoiceRig } from '../support/voice-server.ts';
import type { VoiceClient } from '../support/voice-client.ts';

const ANSWERING: ChatRule[] = [
  { when: { lastRole: 'none' }, respond: { text: 'Hello there.' } },
  { when: { lastRole: 'user' }, respond: { text: 'Yes, I am here and listening to you.' } },
];

/** Provider timeouts short enough that a hung provider fails in well under a second. */
const TIMEOUTS = { llm: 400, stt: 500, tts: 1_000 };

interface FailureCase {
  name: string;
  code: 'llm_failed' | 'stt_failed' | 'tts_failed';
  /** Whether the agent can still say its fallback line (not when speech itself is down). */
  fallbackSpoken: boolean;
  /** How the user's turn arrives. */
  turn: 'typed' | 'spoken';
  inject(rig: VoiceRig): void;
  clear(rig: VoiceRig): void;
  /** Extra checks on what the provider saw. */
  check?(rig: VoiceRig, chatsBefore: number): void | Promise<void>;
}

const chatCount = (rig: VoiceRig) => rig.openai.requests.filter((r) => r.path === '/v1/chat/completions').length;

const CASES: FailureCase[] = [
  {
    name: 'the LLM answers 500 twice',
    code: 'llm_failed',
    fallbackSpoken: true,
    turn: 'typed',
    inject: (rig) => rig.openai.setRules([{ when: { lastRole: 'user' }, respond: { status: 500 } }, ...ANSWERING]),
    clear: (rig) => rig.openai.setRules(ANSWERING),
    // One retry, then give up: two attempts, not a storm.
    check: (rig, before) => expect(chatCount(rig) - before).toBe(2),
  },
  {
    name: 'the LLM hangs beyond its timeout',
    code: 'llm_failed',
    fallbackSpoken: true,
    turn: 'typed',
    inject: (rig) => rig.openai.setRules([{ when: { lastRole: 'user' }, respond: { hangMs: Infinity } }, ...ANSWERING]),
    clear: (rig) => rig.openai.setRules(ANSWERING),
    // Both attempts were cancelled, not left hanging on the provider.
    check: (rig, before) =>
      vi.waitFor(() => {
        const attempts = rig.openai.requests.filter((r) => r.path === '/v1/chat/completions').slice(before);
        expect(attempts.map((r) => r.state)).toEqual(['aborted', 'aborted']);
      }),
  },
  {
    name: 'the LLM streams garbage',
    code: 'llm_failed',
    fallbackSpoken: true,
    turn: 'typed',
    inject: (rig) => rig.openai.setRules([{ when: { lastRole: 'user' }, respond: { garbage: true } }, ...ANSWERING]),
    clear: (rig) => rig.openai.setRules(ANSWERING),
  },
  {
    name: 'the STT refuses the WebSocket upgrade',
    code: 'stt_failed',
    fallbackSpoken: true,
    turn: 'spoken',
    inject: (rig) => rig.deepgram.setListenFault({ refuseStatus: 503 }),
    clear: (rig) => rig.deepgram.setListenFault(undefined),
  },
  {
    name: 'the STT goes silent on Finalize',
    code: 'stt_failed',
    fallbackSpoken: true,
    turn: 'spoken',
    inject: (rig) => rig.deepgram.setListenFault({ silent: true }),
    clear: (rig) => rig.deepgram.setListenFault(undefined),
  },
  {
    name: 'the TTS answers 500',
    code: 'tts_failed',
    fallbackSpoken: false,
    turn: 'typed',
    inject: (rig) => rig.openai.setSpeechFault({ status: 500 }),
    clear: (rig) => rig.openai.setSpeechFault(undefined),
  },
];

// A provider failure never hangs or kills a session: the user gets a clear non-fatal error, the
// agent says its fallback line when it still can, and the next turn works once the fault clears.
describe('provider failures during a session', () => {
  const rig = useVoiceRig({
    rules: ANSWERING,
    tts: 'openai',
    openai: { msPerWord: 30 },
    deepgram: { transcribe: () => 'Are you there?' },
    timeoutsMs: TIMEOUTS,
  });
  // A spoken turn's failure is timed from when the turn starts: its words are synthesized now.
  beforeAll(async () => {
    await synthesizeSpeech('Are you there?');
  });
  // A case that fails half-way must not leave its fault behind for the next one.
  let injected: FailureCase | null = null;
  afterEach(() => {
    injected?.clear(rig);
    injected = null;
  });

  const quiet = (client: VoiceClient, after: number) => client.waitFor('agent_stopped_speaking', (e) => client.events.indexOf(e) > after);
  const lastIndex = (client: VoiceClient) => client.events.length - 1;

  async function userTurn(client: VoiceClient, turn: 'typed' | 'spoken', text: string): Promise<void> {
    if (turn === 'typed') client.send({ type: 'text', text });
    else await client.speak(text, { speed: 3 });
  }

  it.each(CASES)('$name: a non-fatal $code error, and the session goes on', { timeout: 15_000 }, async (failure) => {
    const client = await rig.connect({});
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Hello there.');
    await quiet(client, 0);

    failure.inject(rig);
    injected = failure;
    const chatsBefore = chatCount(rig);
    const triggeredAt = performance.now();
    await userTurn(client, failure.turn, 'Are you there?');
    const error = await client.waitFor('error', undefined, 5_000);
    const failedWithin = performance.now() - triggeredAt;
    expect(error).toMatchObject({ code: failure.code, fatal: false });
    expect(error.message).toEqual(expect.any(String));
    // Nothing hangs: the failure is reported within a few provider timeouts.
    expect(failedWithin).toBeLessThan(4_000);
    await failure.check?.(rig, chatsBefore);

    const errorAt = client.events.indexOf(error);
    if (failure.fallbackSpoken) {
      // The fallback line is heard: agent audio arrives after the error.
      await quiet(client, errorAt);
      expect(client.audioFrames.filter((f) => f.afterEvent >= errorAt).length).toBeGreaterThan(10);
      const spoken = rig.openai.requests.filter((r) => r.path === '/v1/audio/speech').map((r) => (r.body as { input: string }).input);
      expect(spoken).toContain(FALLBACK_LINE);
    } else {
      // Nothing could be said, but the words still reach the screen.
      await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Yes, I am here and listening to you.');
    }
    expect(client.socket.readyState).toBe(client.socket.OPEN);

    // Fault cleared: the next turn is answered, in words and in audio.
    failure.clear(rig);
    await new Promise((r) => setTimeout(r, 50));
    const before = lastIndex(client);
    client.send({ type: 'text', text: 'Are you there now?' });
    const answer = await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Yes, I am here and listening to you.' && client.events.indexOf(e) > before);
    await quiet(client, client.events.indexOf(answer));
    expect(client.audioFrames.filter((f) => f.afterEvent > client.events.indexOf(answer)).length).toBeGreaterThan(5);

    if (failure.turn === 'spoken') {
      // Speech works again too: the STT reconnects instead of staying broken for the session.
      const beforeSpoken = lastIndex(client);
      await userTurn(client, 'spoken', 'Are you there?');
      await client.waitFor('transcript', (e) => e.role === 'user' && e.text === 'Are you there?' && client.events.indexOf(e) > beforeSpoken);
      await client.waitFor('transcript', (e) => e.role === 'agent' && client.events.indexOf(e) > beforeSpoken);
    }
    // One failure, one error: nothing else went wrong on the way.
    expect(client.ofType('error')).toHaveLength(1);
    client.send({ type: 'end' });
    expect((await client.waitFor('session_ended')).reason).toBe('client_ended');
  });
});
