import { expect, it } from 'vitest';
import { BASELINE_TURN_POLICY } from '../../server/engine/turn-rules.ts';
import { startScriptedSession } from './scripted-session.ts';

// A spoken turn's latency starts at the last voiced audio, not at the end of the turn: the
// client is told how long endpointing and transcription took, on top of the model and the voice.
it('a spoken turn reports endpointing, transcription, model and voice times that add up to voice-to-voice', async () => {
  const rig = await startScriptedSession({
    model: [{ text: "Welcome to ten questions! Tell me when you're ready." }, { text: 'Great, here we go.', firstChunkAfterMs: 250 }],
    transcripts: ["I'm not sure yet"],
    transcribeAfterMs: 120,
    voice: { firstAudioAfterMs: 80 },
    // The engine's turn-taking before its rules: what this test measures is the rest of the turn.
    turn: BASELINE_TURN_POLICY,
  });
  await rig.run(3_000);
  const before = rig.events.length;

  rig.user.startsSpeaking();
  await rig.run(1_000);
  rig.user.stopsSpeaking(500);
  await rig.run(2_000);

  expect(rig.kinds(before)).toEqual(['user_started_speaking', 'user_stopped_speaking', 'transcript', 'transcript', 'agent_started_speaking', 'metrics', 'agent_stopped_speaking']);
  expect(rig.ofType('transcript').filter((t) => t.role === 'user').map((t) => t.text)).toEqual(["I'm not sure yet"]);
  expect(rig.ofType('metrics').at(-1)).toEqual({
    type: 'metrics',
    turn: 2,
    endpointing_ms: 500,
    stt_ms: 120,
    llm_ttft_ms: 250,
    tts_ttfb_ms: 80,
    voice_to_voice_ms: 950,
    server_ms: 0,
  });
  // The transcriber heard the pre-roll the voice activity detector handed over.
  expect(rig.stt!.samplesHeard()).toBeGreaterThan(0);
});
