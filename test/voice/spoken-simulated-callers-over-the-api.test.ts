// A stored test with a simulated caller, run over the API in audio mode on a server with a voice:
// the caller's turns are spoken into the server's own session stack (flite → Silero → the
// server's Deepgram STT, here the fake, which hears by sound) and the agent's audio goes back to
// the caller through the same STT. The run is admitted and charged as a call that used the
// language model, speech to text and the voice; a second run while it plays is refused with 429.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createFliteTts } from '../../server/providers/tts/flite.ts';
import { BOOKING_PATH, CALLER_TEST, GOOD_JUDGE, rules } from '../support/booking-simulated-callers.ts';
import { bookingRecogniser } from '../support/booking-spoken-callers.ts';
import { createFlow } from '../support/server.ts';
import { useVoiceRig } from '../support/voice-server.ts';

let hear: (pcm: Int16Array) => string = () => '';

describe('a spoken simulated caller over the API', () => {
  const rig = useVoiceRig({ rules: rules(GOOD_JUDGE), deepgram: { transcribe: (pcm) => hear(pcm) } });
  let flowId: string;
  beforeAll(async () => {
    // The server speaks with flite, its default voice: the fake learns the calls' lines in it.
    hear = await bookingRecogniser(createFliteTts());
    flowId = await createFlow(rig.server, rig.account.apiKey, 'Booking', readFileSync(BOOKING_PATH, 'utf8'));
    const stored = await rig.server.request('POST', `/v1/flows/${flowId}/tests`, { apiKey: rig.account.apiKey, body: { yaml_content: CALLER_TEST } });
    expect(stored.status).toBe(201);
  }, 60_000);

  const credits = async () => (await rig.server.request('GET', '/v1/credits/balance', { apiKey: rig.account.apiKey })).body;

  it('books Tuesday heard through STT both ways, is charged all three parts, and refuses a second run with 429 meanwhile', { timeout: 120_000 }, async () => {
    const key = rig.account.apiKey;
    const before = await credits();
    const parts = (['llm', 'stt', 'tts'] as const).reduce((cents, part) => cents + (before.parts[part].rate_per_minute_usd_cents as number), 0);
    expect(parts).toBeGreaterThan(0);

    const started = await rig.server.request('POST', `/v1/flows/${flowId}/tests/run`, { apiKey: key, body: { mode: 'audio', speed: 4 } });
    expect(started.status).toBe(202);
    expect(started.body.estimated_cost_usd_cents).toBe(parts);
    const second = await rig.server.request('POST', `/v1/flows/${flowId}/tests/run`, { apiKey: key, body: { mode: 'audio', speed: 4 } });
    expect(second.status).toBe(429);
    expect(second.body.error.code).toBe('test_run_in_progress');
    expect(second.headers.get('retry-after')).toBe('10');

    let run: any;
    await vi.waitFor(
      async () => {
        run = (await rig.server.request('GET', `/v1/flows/${flowId}/tests/runs/${started.body.id}`, { apiKey: key })).body;
        expect(run.status).not.toBe('running');
      },
      { timeout: 90_000, interval: 200 },
    );
    expect(run.error).toBeNull();
    expect(run.status).toBe('passed');
    const call = run.result.tests[0].runs[0];
    expect(call.path).toEqual(['welcome', 'offer_slot', 'booked']);
    expect(call.caller).toMatchObject({ turns: 2, ended_by: 'flow' });
    expect(call.judgement.criteria.map((c: { passed: boolean }) => c.passed)).toEqual([true, true]);
    // The server's speech to text heard the caller: its words are the session's, not the model's text.
    expect(call.transcript.filter((l: { role: string }) => l.role === 'user').map((l: { text: string }) => l.text)).toEqual(['do you have anything on tuesday', 'yes please book it']);
    expect(call.spoken_turns.map((t: { said: string; transcribed: string }) => [t.said, t.transcribed])).toEqual([
      ['Do you have anything on Tuesday?', 'do you have anything on tuesday'],
      ['Yes please, book it.', 'yes please book it'],
    ]);
    expect(call.spoken_turns[0].agent_reply_heard).toBe('let me check tuesday tuesday at ten is free shall i book it');
    for (const turn of call.spoken_turns) expect(turn.voice_to_voice_ms).toBeGreaterThan(0);
    // One call of under a minute: the first minute of each part it used.
    await vi.waitFor(async () => expect((await credits()).balance_usd_cents).toBe(before.balance_usd_cents - parts), { timeout: 10_000 });
  });
});
