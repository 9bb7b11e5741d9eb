import { describe, expect, it } from 'vitest';
import { RtpClock } from '../../server/transports/webrtc/rtp-clock.ts';

// The agent's frames leave up to 40 ms before they play; the RTP timestamps must still say when
// each one plays, so the browser's jitter buffer hears an even voice and real pauses as pauses.
describe('RTP timestamps for the agent voice', () => {
  it('advances 960 per frame through a talkspurt sent ahead in a burst, marking only its start', () => {
    const clock = new RtpClock(1000);
    // Three frames at once (the lead), then one per 20 ms.
    const sent = [0, 0, 0, 20, 40, 60].map((at) => clock.next(at));
    expect(sent.map((f) => f.timestamp)).toEqual([1000, 1960, 2920, 3880, 4840, 5800]);
    expect(sent.map((f) => f.marker)).toEqual([true, false, false, false, false, false]);
  });

  it('keeps counting through a stall the lead covered (the held frames leave together)', () => {
    const clock = new RtpClock(0);
    for (const at of [0, 0, 0, 20, 40]) clock.next(at); // frames 0–4 play until 100
    const after = [90, 90, 100].map((at) => clock.next(at));
    expect(after).toEqual([
      { timestamp: 5 * 960, marker: false },
      { timestamp: 6 * 960, marker: false },
      { timestamp: 7 * 960, marker: false },
    ]);
  });

  it('jumps by the silence since the last frame played when the agent speaks again', () => {
    const clock = new RtpClock(0);
    clock.next(0);
    clock.next(0); // plays 20–40
    const next = clock.next(1040); // a second after the last frame ended
    expect(next).toEqual({ timestamp: 960 + 1020 * 48, marker: true });
    expect(clock.next(1040)).toEqual({ timestamp: 960 + 1020 * 48 + 960, marker: false });
  });

  it('wraps at 2^32 like RTP', () => {
    const clock = new RtpClock(0xffffffff - 100);
    clock.next(0);
    expect(clock.next(0).timestamp).toBe((0xffffffff - 100 + 960) >>> 0);
  });
});
