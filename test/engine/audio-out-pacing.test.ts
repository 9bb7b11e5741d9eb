import { describe, expect, it } from 'vitest';
import { AudioOut, FRAME_SAMPLES } from '../../server/engine/audio-out.ts';

// AudioOut paces the agent's voice on a fake clock here, so each case is exact: what a caller
// hears is frames at 20 ms steps, and "late" counts only frames the process itself delayed.
function rig() {
  let now = 0;
  const sent: number[] = [];
  const out = new AudioOut({ sendFrame: () => sent.push(now), onStarted: () => {}, onFinished: () => {} }, () => now);
  return {
    out,
    sent,
    /** Advances the clock in 5 ms ticks, as the shared AudioClock does. */
    advance(ms: number) {
      for (let t = 0; t < ms; t += 5) {
        now += 5;
        out.tick();
      }
    },
    stall(ms: number) {
      now += ms;
      out.tick();
    },
  };
}

const sentence = (frames: number) => new Int16Array(FRAME_SAMPLES * frames);

describe('pacing the agent voice', () => {
  it('sends one frame per 20 ms, the first at once', () => {
    const r = rig();
    r.out.beginReply();
    const s = r.out.beginSegment('Hello there.');
    s.append(sentence(5));
    s.complete();
    r.advance(100);
    expect(r.sent).toEqual([0, 20, 40, 60, 80]);
  });

  it('does not count a wait for the next sentence of the reply as late frames', () => {
    const r = rig();
    const before = AudioOut.lateFrames;
    r.out.beginReply();
    const first = r.out.beginSegment('First sentence.');
    first.append(sentence(3));
    first.complete();
    r.advance(200); // the first sentence ends; the second is still being synthesized
    const second = r.out.beginSegment('Second sentence.');
    second.append(sentence(3));
    second.complete();
    r.advance(100);
    expect(r.sent).toHaveLength(6);
    expect(AudioOut.lateFrames - before).toBe(0);
  });

  it('counts a frame the process held back by more than a frame as late', () => {
    const r = rig();
    const before = AudioOut.lateFrames;
    r.out.beginReply();
    const s = r.out.beginSegment('A long sentence.');
    s.append(sentence(10));
    s.complete();
    r.advance(40);
    r.stall(60); // the event loop was blocked for 60 ms
    expect(AudioOut.lateFrames - before).toBe(1);
  });
});

describe('synthesizing only a little ahead of playback', () => {
  it('waits while more than the lookahead is queued, and goes on once playback drains below it', async () => {
    const r = rig();
    r.out.beginReply();
    const s = r.out.beginSegment('A sentence of two seconds.');
    s.append(sentence(100)); // 2 s queued
    s.complete();
    let released = false;
    const waiting = r.out.whenBufferedBelow(1_000).then(() => (released = true));
    r.advance(900);
    await Promise.resolve();
    expect(released).toBe(false); // 1.1 s still to play
    r.advance(200);
    await waiting;
    expect(r.sent.length).toBeGreaterThanOrEqual(50);
  });

  it('lets waiting synthesis go at once when the agent is interrupted', async () => {
    const r = rig();
    r.out.beginReply();
    const s = r.out.beginSegment('A long answer.');
    s.append(sentence(200));
    const waiting = r.out.whenBufferedBelow(500);
    r.out.stop();
    await expect(waiting).resolves.toBeUndefined();
  });

  it('reports a sentence queued but not yet synthesized as unheard on barge-in', () => {
    const r = rig();
    r.out.beginReply();
    const first = r.out.beginSegment('First sentence here.', 1);
    r.out.beginSegment('Second sentence never synthesized.', 1);
    first.append(sentence(5));
    first.complete();
    r.advance(200);
    expect(r.out.stop()).toEqual([
      { tag: 1, text: 'First sentence here.', spoken: 'First sentence here.', whole: true },
      { tag: 1, text: 'Second sentence never synthesized.', spoken: '', whole: false },
    ]);
  });
});
