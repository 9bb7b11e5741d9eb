import { expect, it } from 'vitest';
import { CallerSpeechGate } from '../../server/engine/caller-speech-gate.ts';
import type { CallerSpeechFrames } from '../../server/engine/frames.ts';

// The gate between the VAD and the speech recognizer, frames in → frames out: while a state's
// `interruptible: false` line plays, a turn the caller begins is not heard at all.
function gate() {
  let guarded = false;
  const passed: CallerSpeechFrames['type'][] = [];
  const stage = new CallerSpeechGate(() => guarded, { push: (frame) => void passed.push(frame.type) });
  const turn = () => {
    stage.push({ type: 'speech_started', preRoll: new Int16Array(160) });
    stage.push({ type: 'caller_speech', pcm: new Int16Array(320) });
    stage.push({ type: 'turn_ended', lastVoicedAt: 0 });
  };
  return { stage, passed, turn, guard: (on: boolean) => void (guarded = on) };
}

it('lets every frame of a turn through while no line is guarded', () => {
  const g = gate();
  g.turn();
  expect(g.passed).toEqual(['speech_started', 'caller_speech', 'turn_ended']);
});

it('drops a turn begun over a guarded line whole, its end included, and hears the next one', () => {
  const g = gate();
  g.guard(true);
  g.stage.push({ type: 'speech_started', preRoll: new Int16Array(160) });
  // The line finishes while the caller is still talking: the rest of that turn stays unheard.
  g.guard(false);
  g.stage.push({ type: 'caller_speech', pcm: new Int16Array(320) });
  g.stage.push({ type: 'turn_ended', lastVoicedAt: 0 });
  expect(g.passed).toEqual([]);
  g.turn();
  expect(g.passed).toEqual(['speech_started', 'caller_speech', 'turn_ended']);
});

it('lets a turn begun before the guarded line goes on to its end', () => {
  const g = gate();
  g.stage.push({ type: 'speech_started', preRoll: new Int16Array(160) });
  g.guard(true);
  g.stage.push({ type: 'caller_speech', pcm: new Int16Array(320) });
  g.stage.push({ type: 'turn_ended', lastVoicedAt: 0 });
  expect(g.passed).toEqual(['speech_started', 'caller_speech', 'turn_ended']);
});

it('does not let voiced audio begun over a guarded line pause it, but lets any fading through so a pause begun before ends', () => {
  const g = gate();
  g.stage.push({ type: 'caller_voicing', voicing: true });
  g.guard(true);
  g.stage.push({ type: 'caller_voicing', voicing: false });
  g.stage.push({ type: 'caller_voicing', voicing: true });
  expect(g.passed).toEqual(['caller_voicing', 'caller_voicing']);
});
