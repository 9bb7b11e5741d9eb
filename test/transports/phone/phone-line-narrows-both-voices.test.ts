// The studio's phone line (test-talk with `phone_line=1`): what goes through it sounds as a call
// would, so a voice's energy above the 8 kHz line's 4 kHz edge is gone, speech below it stays,
// and the agent's paced frames keep their length.
import { describe, expect, it } from 'vitest';
import { PhoneLine } from '../../../server/transports/phone/media-bridge.ts';

const RATE = 16_000;
const FRAME = 320;

function tone(hz: number, samples: number, from = 0): Int16Array {
  const pcm = new Int16Array(samples);
  for (let i = 0; i < samples; i++) pcm[i] = Math.round(8_000 * Math.sin((2 * Math.PI * hz * (from + i)) / RATE));
  return pcm;
}

function rms(pcm: Int16Array): number {
  let sum = 0;
  for (const sample of pcm) sum += sample * sample;
  return Math.sqrt(sum / Math.max(1, pcm.length));
}

/** A second of a tone through the agent's side, 20 ms frames at a time; the first 100 ms (filters filling) left out. */
function throughAgentSide(line: PhoneLine, hz: number): Int16Array {
  const out: Int16Array[] = [];
  for (let at = 0; at < RATE; at += FRAME) {
    const frame = line.agentFrame(tone(hz, FRAME, at));
    expect(frame.length).toBe(FRAME);
    out.push(frame);
  }
  const all = new Int16Array(out.length * FRAME);
  out.forEach((frame, i) => all.set(frame, i * FRAME));
  return all.subarray(RATE / 10);
}

describe('the phone line', () => {
  it("keeps the agent's speech band and drops what a phone cannot carry, frame for frame", () => {
    const input = rms(tone(1_000, RATE));
    expect(rms(throughAgentSide(new PhoneLine(), 1_000))).toBeGreaterThan(input * 0.8);
    expect(rms(throughAgentSide(new PhoneLine(), 6_000))).toBeLessThan(input * 0.02);
  });

  it("does the same to the caller's audio, whatever the chunk size", () => {
    const line = new PhoneLine();
    const low: Int16Array[] = [];
    for (let at = 0; at < RATE; at += 480) low.push(line.callerAudio(tone(1_000, 480, at)));
    const total = low.reduce((n, chunk) => n + chunk.length, 0);
    // The filters hold back a few milliseconds; nothing else is lost.
    expect(total).toBeGreaterThan(RATE - 200);
    const joined = new Int16Array(total);
    low.reduce((at, chunk) => (joined.set(chunk, at), at + chunk.length), 0);
    expect(rms(joined.subarray(1_600))).toBeGreaterThan(rms(tone(1_000, RATE)) * 0.8);
    const high = new PhoneLine().callerAudio(tone(6_000, RATE));
    expect(rms(high.subarray(1_600))).toBeLessThan(rms(tone(6_000, RATE)) * 0.02);
  });

  it('starts a reply after a barge-in without the end of the one cut off', () => {
    const line = new PhoneLine();
    for (let at = 0; at < 10 * FRAME; at += FRAME) line.agentFrame(tone(1_000, FRAME, at));
    line.replyOver();
    // The next reply is silence at first: nothing of the loud one before comes out.
    expect(rms(line.agentFrame(new Int16Array(FRAME)))).toBe(0);
  });
});
