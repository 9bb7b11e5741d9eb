import { expect, it } from 'vitest';
import { startScriptedSession } from './scripted-session.ts';

// A typed turn through the whole session: the model answers after 300 ms, the voice's first
// audio takes 100 ms, and on the fake clock the latency the client is told is exactly that.
it('a typed turn is answered in speech, in order, with its latency parts and nothing added by the server', async () => {
  const rig = await startScriptedSession({
    model: [{ text: "Welcome to ten questions! Tell me when you're ready." }, { text: 'Sure, tell me when you are ready.', firstChunkAfterMs: 300 }],
    voice: { msPerWord: 200, firstAudioAfterMs: 100 },
  });
  await rig.run(3_000);
  const before = rig.events.length;
  const framesBefore = rig.frames.length;

  rig.send({ type: 'text', text: 'How does this work?' });
  await rig.run(3_000);

  expect(rig.kinds(before)).toEqual(['transcript', 'transcript', 'agent_started_speaking', 'metrics', 'agent_stopped_speaking']);
  expect(rig.events.slice(before, before + 2)).toEqual([
    { type: 'transcript', role: 'user', text: 'How does this work?', final: true },
    { type: 'transcript', role: 'agent', text: 'Sure, tell me when you are ready.', final: true },
  ]);
  expect(rig.ofType('metrics').at(-1)).toEqual({
    type: 'metrics',
    turn: 2,
    endpointing_ms: null,
    stt_ms: null,
    llm_ttft_ms: 300,
    tts_ttfb_ms: 100,
    voice_to_voice_ms: 400,
    server_ms: 0,
  });
  // Seven words of 200 ms: 1.4 s of speech in 20 ms frames, all of it sent.
  expect(rig.frames.length - framesBefore).toBe(70);
  // The model remembers the exchange in order.
  expect(rig.model!.requests.at(-1)!.messages.slice(1).map((m) => [m.role, m.content])).toEqual([
    ['assistant', "Welcome to ten questions! Tell me when you're ready."],
    ['user', 'How does this work?'],
  ]);
});
