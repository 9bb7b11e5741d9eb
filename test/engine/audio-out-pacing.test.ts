import { describe, expect, it } from 'vitest';
import { AudioOut, FRAME_SAMPLES, OUTPUT_LEAD_MS } from '../../server/engine/audio-out.ts';

// AudioOut paces the agent's voice on a fake clock here, so each case is exact: what a caller
// hears is frames at 20 ms steps, each sent up to 40 ms ahead, and "late" counts only frames the
// process itself delayed past their play time.
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
    /** A reply of one sentence, all of it synthesized. */
    speak(frames: number) {
      out.beginReply();
      const s = out.beginSegment('A long sentence.');
      s.append(new Int16Array(FRAME_SAMPLES * frames));
      s.complete();
    },
  };
}

const sentence = (frames: number) => new Int16Array(FRAME_SAMPLES * frames);

describe('pacing the agent voice', () => {
  it('sends the first frames at once, up to the lead, then one per 20 ms, each 40 ms before it plays', () => {
    expect(OUTPUT_LEAD_MS).toBe(40);
    const r = rig();
    r.speak(6);
    r.advance(100);
    // Frame i plays at 20·i ms; it leaves 40 ms before that, or at once.
    expect(r.sent).toEqual([0, 0, 0, 20, 40, 60]);
  });

  it('counts a wait for the next sentence of the reply as an underrun, not as late frames', () => {
    const r = rig();
    const before = AudioOut.lateFrames;
    const underrunsBefore = AudioOut.underrunFrames;
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
    expect(AudioOut.underrunFrames - underrunsBefore).toBe(1); // the caller heard the gap
  });

  it('keeps the schedule when the next sentence comes while the caller still has audio', () => {
    const r = rig();
    const underrunsBefore = AudioOut.underrunFrames;
    r.out.beginReply();
    const first = r.out.beginSegment('First sentence.');
    first.append(sentence(3));
    first.complete();
    r.advance(30); // 3 frames (60 ms) sent at 0; the caller plays them until 60
    const second = r.out.beginSegment('Second sentence.');
    second.append(sentence(3));
    second.complete();
    r.advance(100);
    // No second burst: frame 3 plays at 60 and leaves at 30 (when it came), frame 4 at 40, 5 at 60.
    expect(r.sent).toEqual([0, 0, 0, 30, 40, 60]);
    expect(AudioOut.underrunFrames - underrunsBefore).toBe(0);
  });

  it('absorbs a stall shorter than the lead: nothing late, the held-back frames leave at once', () => {
    const r = rig();
    const before = AudioOut.lateFrames;
    r.speak(10);
    r.advance(40); // frames 0–4 sent; the caller has audio until 100
    r.stall(50); // the event loop was blocked until 90
    r.advance(30);
    // Frames 5 and 6 (due to leave at 60 and 80) go at 90; 7 and 8 on the old schedule.
    expect(r.sent).toEqual([0, 0, 0, 20, 40, 90, 90, 100, 120]);
    expect(AudioOut.lateFrames - before).toBe(0);
  });

  it('counts no late frame when a paused reply goes on, however the clock moved between the two readings', () => {
    // A real clock moves between resume() starting the new burst and the frame leaving: here
    // every reading is a microsecond later than the one before.
    let now = 0;
    const sent: number[] = [];
    const out = new AudioOut({ sendFrame: () => sent.push(now), onStarted: () => {}, onFinished: () => {} }, () => (now += 0.001));
    const before = AudioOut.lateFrames;
    out.beginReply();
    const s = out.beginSegment('A long sentence.');
    s.append(sentence(10));
    s.complete();
    out.pause();
    now += 300; // the caller said "mm-hm"
    out.resume();
    expect(sent.length).toBeGreaterThan(3);
    expect(AudioOut.lateFrames - before).toBe(0);
  });

  it('counts a frame that leaves after its play time as late, and starts a new lead from there', () => {
    const r = rig();
    const before = AudioOut.lateFrames;
    r.speak(10);
    r.advance(40);
    r.stall(80); // blocked until 120: frame 5 should have played at 100
    expect(AudioOut.lateFrames - before).toBe(1);
    expect(r.sent.slice(5)).toEqual([120, 120, 120]); // a gap was heard; a fresh lead of two frames
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
