import { expect, it } from 'vitest';
import { startScriptedSession } from './scripted-session.ts';

// A turn reports its latency at its first audio frame. When the voice is slow (an embedded TTS
// on a loaded machine takes seconds) the caller may talk or hang up before that frame: the turn
// is cut, and it must still report, or its row is missing from the studio's latency table.
const SLOW_VOICE = { firstAudioAfterMs: 2_000 };

it('a greeting cut by the caller before its voice came still reports its metrics, without a voice-to-voice time', async () => {
  const rig = await startScriptedSession({
    model: [{ text: "Welcome to ten questions! Tell me when you're ready.", firstChunkAfterMs: 300 }, { text: 'Take your time.' }],
    transcripts: ['Hello?'],
    voice: SLOW_VOICE,
  });
  await rig.run(1_000);
  expect(rig.frames).toHaveLength(0);

  rig.user.startsSpeaking();

  expect(rig.kinds().slice(-3)).toEqual(['user_started_speaking', 'interrupted', 'metrics']);
  expect(rig.ofType('metrics')).toEqual([
    { type: 'metrics', turn: 1, endpointing_ms: null, stt_ms: null, llm_ttft_ms: 300, tts_ttfb_ms: null, voice_to_voice_ms: null, server_ms: null },
  ]);
  // The caller's own turn reports as usual, once its answer is heard: the 800 ms the words
  // "Hello?" wait after the caller's last voiced audio, then the voice's 2 s.
  rig.user.stopsSpeaking();
  await rig.run(3_000);
  expect(rig.ofType('metrics').map((m) => [m.turn, m.voice_to_voice_ms])).toEqual([
    [1, null],
    [2, 2_800],
  ]);
});

it('a turn the caller hangs up on before its voice came reports its metrics before session_ended', async () => {
  const rig = await startScriptedSession({
    model: [{ text: "Welcome to ten questions! Tell me when you're ready." }, { text: 'Great question.', firstChunkAfterMs: 100 }],
    voice: SLOW_VOICE,
  });
  await rig.run(5_000);
  rig.send({ type: 'text', text: 'What is this?' });
  await rig.run(1_000);

  rig.send({ type: 'end' });
  await rig.run(0);

  expect(rig.kinds().slice(-3)).toEqual(['interrupted', 'metrics', 'session_ended']);
  expect(rig.ofType('metrics').map((m) => [m.turn, m.llm_ttft_ms, m.voice_to_voice_ms])).toEqual([
    [1, 0, 2_000],
    [2, 100, null],
  ]);
});

it('a turn that already reported at its first frame does not report again when it is cut', async () => {
  const rig = await startScriptedSession({ model: [{ text: "Welcome to ten questions! Tell me when you're ready." }], voice: { msPerWord: 300 } });
  await rig.run(500);
  expect(rig.ofType('metrics')).toHaveLength(1);

  rig.send({ type: 'interrupt' });
  await rig.run(1_000);

  expect(rig.ofType('metrics')).toHaveLength(1);
  expect(rig.kinds().slice(-3)).toEqual(['interrupted', 'agent_stopped_speaking', 'transcript']);
});
