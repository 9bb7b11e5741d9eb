import { expect, it } from 'vitest';
import type { Frame } from '../../server/engine/frames.ts';
import { createVadUserInput } from '../../server/engine/user-input.ts';
import { VadStage } from '../../server/engine/vad-stage.ts';
import type { VoiceActivityModel } from '../../server/providers/types.ts';

// The VAD / end-of-turn stage alone, caller audio frames in → speech frames out, over a stand-in
// model that calls any frame with energy "speech" (or fails, when told to).
function energyModel(fails = false): VoiceActivityModel {
  return {
    provider: 'energy',
    frameSamples: 512,
    createDetector: () => ({
      probability: async (frame: Float32Array) => {
        if (fails) throw new Error('inference failed');
        let sum = 0;
        for (const s of frame) sum += s * s;
        return Math.sqrt(sum / frame.length) > 0.01 ? 0.9 : 0;
      },
      reset: () => {},
      close: () => {},
    }),
  };
}

/** Pushes `ms` of 20 ms frames, loud or silent, then lets the model's answers arrive. */
async function play(stage: VadStage, ms: number, loud: boolean): Promise<void> {
  for (let t = 0; t < ms; t += 20) stage.push({ type: 'caller_audio', pcm: new Int16Array(320).fill(loud ? 3_000 : 0) });
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
}

function vadStage(model: VoiceActivityModel) {
  const out: Frame[] = [];
  const stage = new VadStage(createVadUserInput(model), { push: (frame) => void out.push(frame) });
  /** The kinds that came out, each run of one kind once. */
  const kinds = () => out.map((f) => f.type).filter((type, i, all) => type !== all[i - 1]);
  return { stage, out, kinds };
}

it('hands on a spoken turn as its start with the pre-roll, the speech after it, and its end', async () => {
  const v = vadStage(energyModel());
  await play(v.stage, 400, false);
  await play(v.stage, 1_000, true);
  await play(v.stage, 1_000, false);
  // Voiced audio is reported at once, then confirmed as speech 200 ms on.
  expect(v.kinds()).toEqual(['caller_voicing', 'speech_started', 'caller_speech', 'turn_ended']);
  expect(v.out[0]).toEqual({ type: 'caller_voicing', voicing: true });
  const started = v.out[1]!;
  // The pre-roll reaches back before the speech was confirmed, so the STT hears its first syllable.
  expect(started.type === 'speech_started' && started.preRoll.some((s) => s === 0) && started.preRoll.some((s) => s === 3_000)).toBe(true);
  v.stage.close();
});

it('waits out the longer silence a flow state asks for before it ends the turn', async () => {
  const v = vadStage(energyModel());
  v.stage.setEndpointingMs(1_500);
  await play(v.stage, 1_000, true);
  await play(v.stage, 1_000, false);
  expect(v.kinds()).toEqual(['caller_voicing', 'speech_started', 'caller_speech']);
  await play(v.stage, 600, false);
  expect(v.kinds()).toEqual(['caller_voicing', 'speech_started', 'caller_speech', 'turn_ended']);
  v.stage.close();
});

it('reports a blip between turns as voicing that faded, and starts no turn', async () => {
  const v = vadStage(energyModel());
  await play(v.stage, 400, false);
  await play(v.stage, 100, true);
  await play(v.stage, 400, false);
  expect(v.out).toEqual([
    { type: 'caller_voicing', voicing: true },
    { type: 'caller_voicing', voicing: false },
  ]);
  v.stage.close();
});

it('reports a model that fails as a warning and hands on no speech', async () => {
  const v = vadStage(energyModel(true));
  await play(v.stage, 200, true);
  expect(v.out.length).toBeGreaterThan(0);
  expect(new Set(v.out.map((f) => (f.type === 'warning' ? `${f.type} ${f.code}` : f.type)))).toEqual(new Set(['warning vad_failed']));
  v.stage.close();
});

it('hands on nothing once closed', async () => {
  const v = vadStage(energyModel());
  v.stage.close();
  await play(v.stage, 1_000, true);
  expect(v.out).toEqual([]);
});
