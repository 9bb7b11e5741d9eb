// Simulated callers in audio mode: the caller model's turns are said by the embedded voice and
// streamed into a real session at four times real time, heard by Silero and the Deepgram fake
// (through the real Deepgram SDK), and the agent's audio goes back to the caller through the same
// speech to text. The fake hears by sound (test/fakes/template-recogniser.ts) and answers in a
// recogniser's words, so the session's transcript and the caller's model show what was heard,
// not what was typed. Both models are the fake OpenAI through the real openai SDK.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseFlowTests } from '../../server/flow/tests-format.ts';
import { createOpenAILanguageModel } from '../../server/providers/llm/openai.ts';
import { createDeepgramSpeechToText } from '../../server/providers/stt/deepgram.ts';
import { createFliteTts, shutdownFlite } from '../../server/providers/tts/flite.ts';
import { createSileroVad, releaseSileroModels } from '../../server/providers/turn/silero.ts';
import type { VoiceActivityModel } from '../../server/providers/types.ts';
import { runTests } from '../../server/testing/run-tests.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { BOOKING, CALLER_TEST, GOOD_JUDGE, PATIENT, RAMBLER, rules } from '../support/booking-simulated-callers.ts';
import { bookingRecogniser } from '../support/booking-spoken-callers.ts';

let openai: FakeOpenAI;
let deepgram: FakeDeepgram;
let vad: VoiceActivityModel;
const voice = createFliteTts();
beforeAll(async () => {
  openai = await startFakeOpenAI({ rules: rules(GOOD_JUDGE) });
  deepgram = await startFakeDeepgram({ transcribe: await bookingRecogniser(voice) });
  const silero = createSileroVad();
  await silero.load();
  vad = silero;
}, 120_000);
afterAll(async () => {
  await openai?.close();
  await deepgram?.close();
  // The embedded voice and VAD workers this file started.
  await shutdownFlite();
  await releaseSileroModels();
});
beforeEach(() => openai.setRules(rules(GOOD_JUDGE)));

const providers = () => ({
  llm: createOpenAILanguageModel({ baseUrl: openai.url, timeoutMs: 20_000 }),
  stt: createDeepgramSpeechToText({ apiKey: 'dg-test', baseUrl: deepgram.url }),
  tts: voice,
  vad,
});

function testsOf(yaml: string) {
  const parsed = parseFlowTests(yaml, BOOKING);
  expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return parsed.tests!;
}

/** The user-role messages the caller's model was sent: what it heard of the agent. */
function callerHeard(persona: string): string[] {
  const requests = openai.requests.filter((r) => JSON.stringify(r.body).includes(persona));
  const last = requests.at(-1)!.body as { messages: Array<{ role: string; content: string }> };
  return last.messages.filter((m) => m.role === 'user').map((m) => m.content);
}

describe('a spoken simulated caller', () => {
  it('books Tuesday through the voice, VAD and STT both ways, and the judge passes', { timeout: 120_000 }, async () => {
    const result = await runTests(BOOKING, testsOf(CALLER_TEST), { mode: 'audio', speed: 4, providers: providers() });
    const test = result.tests[0]!;
    const run = test.runs[0]!;
    expect(run.error).toBeNull();
    expect(run.steps[0]!.checks.filter((c) => !c.passed)).toEqual([]);
    expect(test.passed).toBe(true);
    expect(run.path).toEqual(['welcome', 'offer_slot', 'booked']);
    expect(run.caller).toEqual({ turns: 2, ended_by: 'flow', reason: expect.any(String) });
    expect(run.judgement!.criteria.map((c) => c.passed)).toEqual([true, true]);
    // The session heard the caller through speech to text: its words, not the model's typed text.
    expect(run.transcript.filter((l) => l.role === 'user').map((l) => l.text)).toEqual(['do you have anything on tuesday', 'yes please book it']);
    // The caller heard the agent through speech to text too: what its model was sent.
    expect(callerHeard(PATIENT)).toEqual([
      'welcome to maple street dental i am an automated assistant and this call may be recorded for quality which weekday would suit you',
      'let me check tuesday tuesday at ten is free shall i book it',
    ]);
    // Each turn as said, as heard, and how long the agent took to answer it, voice to voice.
    expect(run.spoken_turns).toEqual([
      { said: 'Do you have anything on Tuesday?', transcribed: 'do you have anything on tuesday', voice_to_voice_ms: expect.any(Number), agent_reply_heard: 'let me check tuesday tuesday at ten is free shall i book it' },
      { said: 'Yes please, book it.', transcribed: 'yes please book it', voice_to_voice_ms: expect.any(Number), agent_reply_heard: null },
    ]);
    for (const turn of run.spoken_turns!) expect(turn.voice_to_voice_ms).toBeGreaterThan(0);
    // The judge read the call as the session had it.
    const judged = openai.requests.find((r) => JSON.stringify(r.body).includes('voxflow_judgement'))!.body as { messages: Array<{ content: string }> };
    expect(judged.messages[1]!.content).toContain('Caller: yes please book it');
  });

  it('stops a caller that never hangs up at max_turns, failing the run with that reason', { timeout: 120_000 }, async () => {
    const tests = testsOf(`
name: a rambler
caller: {persona: "${RAMBLER}", goal: "chat", max_turns: 2}
`);
    const result = await runTests(BOOKING, tests, { mode: 'audio', speed: 4, providers: providers() });
    const run = result.tests[0]!.runs[0]!;
    expect(run.error).toBeNull();
    expect(run.passed).toBe(false);
    expect(run.caller).toEqual({ turns: 2, ended_by: 'max_turns', reason: null });
    expect(run.transcript.filter((l) => l.role === 'user').map((l) => l.text)).toEqual(['oh lovely weather today is it not', 'oh lovely weather today is it not']);
    expect(run.steps[0]!.checks[0]).toMatchObject({ check: 'max_turns', passed: false, message: 'the caller had not hung up after 2 turns (max_turns) and went on: "Oh, lovely weather today, is it not?"' });
  });

  it('is still refused in scripted mode, saying why', async () => {
    await expect(runTests(BOOKING, testsOf(CALLER_TEST), { mode: 'scripted', providers: {} })).rejects.toThrow('has a simulated caller, which talks to the configured model: run it in model mode (--mode model)');
  });

  it('is refused in audio mode without a language model, saying so', async () => {
    const { stt, tts } = providers();
    await expect(runTests(BOOKING, testsOf(CALLER_TEST), { mode: 'audio', providers: { stt, tts, vad } })).rejects.toThrow('"a patient who wants Tuesday gets booked" has a simulated caller, which talks to the configured model: configure one');
  });
});
