// The guessing game's suite in audio mode: every user turn is spoken by flite and streamed into a
// real session faster than real time, heard by Silero, transcribed by the Deepgram fake over its
// socket, and the turn-taking decides when the agent answers. The suite still passes with full
// coverage, and the caller's barge-in cuts the agent's celebration in `won` without undoing it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { parseFlowTests } from '../../server/flow/tests-format.ts';
import { createDeepgramSpeechToText } from '../../server/providers/stt/deepgram.ts';
import { createFliteTts, shutdownFlite } from '../../server/providers/tts/flite.ts';
import { createSileroVad, releaseSileroModels } from '../../server/providers/turn/silero.ts';
import { runTests } from '../../server/testing/run-tests.ts';
import { startFakeDeepgram, type FakeDeepgram } from '../fakes/deepgram-server.ts';
import { GAME_YAML, SUITE_YAML } from '../support/guessing-game-tests.ts';
import { synthesizeSpeech, voicedMs } from '../support/speech.ts';

const GAME = parseFlow(GAME_YAML).document!;
const TESTS = parseFlowTests(SUITE_YAML, GAME).tests!;
const USER_LINES = TESTS.flatMap((t) => t.steps!.flatMap((s) => (s.user !== undefined ? [s.user] : [])));

describe('the guessing game suite, spoken', () => {
  let deepgram: FakeDeepgram;
  beforeAll(async () => {
    // The fake hears each utterance as the next line, as a recogniser that gets every word right.
    // A caller's pause inside a line ("I give up, I am out…") makes the engine ask for the words
    // so far: the fake then gives the words of the line heard by then, as Deepgram would, and the
    // rest when the caller goes on. It knows how long each line takes to say from flite.
    const lengths = await Promise.all(USER_LINES.map(async (line) => voicedMs(await synthesizeSpeech(line))));
    deepgram = await startFakeDeepgram({ transcripts: [...USER_LINES], transcriptAudioMs: lengths });
  });
  afterAll(async () => {
    await deepgram?.close();
    // The embedded voice and VAD workers this file started (other files start their own).
    await shutdownFlite();
    await releaseSileroModels();
  });

  it('passes at four times real time through VAD, STT and turn-taking, covering the whole flow', { timeout: 180_000 }, async () => {
    const vad = createSileroVad();
    await vad.load();
    const result = await runTests(GAME, TESTS, {
      mode: 'audio',
      speed: 4,
      providers: { stt: createDeepgramSpeechToText({ apiKey: 'dg-test', baseUrl: deepgram.url }), tts: createFliteTts(), vad },
    });
    const failures = result.tests.flatMap((t) => [
      ...(t.runs[0]!.error ? [`${t.name}: ${t.runs[0]!.error}`] : []),
      ...t.runs[0]!.steps.filter((s) => !s.passed).map((s) => `${t.name} #${s.index}: ${s.checks.filter((c) => !c.passed).map((c) => c.message).join('; ')}`),
    ]);
    expect(failures).toEqual([]);
    expect(result.passed).toBe(true);
    expect(result.coverage.transitions.uncovered).toEqual([]);
    expect(result.coverage.states.uncovered).toEqual([]);

    const won = result.tests[0]!.runs[0]!;
    // What the caller said was heard, turn by turn, by the speech-to-text provider.
    expect(won.transcript.filter((l) => l.role === 'user').map((l) => l.text)).toEqual(USER_LINES.slice(0, 6));
    // The barge-in: the agent's line in `won` was cut part-way, and the game stayed won.
    const bargeIn = won.steps[5]!;
    const cut = bargeIn.transcript.find((l) => l.interrupted)!;
    expect(cut.role).toBe('agent');
    expect(cut.text.length).toBeGreaterThan(0);
    expect(bargeIn.state).toBe('won');
    expect(won.path).toEqual(['setup', 'playing', 'won', 'setup']);
  });
});
