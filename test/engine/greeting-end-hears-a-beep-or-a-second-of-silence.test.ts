// An answering machine's greeting, heard on a phone line (8 kHz μ-law, widened to the engine's
// 16 kHz), is over at the end of its beep or after a second of silence following its speech;
// the greeting's own words, however long, are never taken for a beep.
import { describe, expect, it } from 'vitest';
import { decodeG711, encodeG711 } from '../../server/audio/g711.ts';
import { resample } from '../../server/audio/resampler.ts';
import { GREETING_END_SILENCE_MS, GREETING_MAX_MS, GreetingEnd } from '../../server/engine/greeting-end.ts';
import { synthesizeSpeech } from '../support/speech.ts';

const RATE = 16_000;

/** Audio as the engine gets it from a call: through μ-law at 8 kHz and back up to 16 kHz. */
function overThePhone(pcm16k: Int16Array): Int16Array {
  const narrow = resample(pcm16k, RATE, 8000);
  return resample(decodeG711('mulaw', encodeG711('mulaw', narrow)), 8000, RATE);
}

function tone(hz: number, ms: number, amplitude = 10_000): Int16Array {
  const pcm = new Int16Array((RATE * ms) / 1000);
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / RATE));
  return pcm;
}

const silence = (ms: number) => new Int16Array((RATE * ms) / 1000);

/** Feeds `pcm` in 20 ms frames, as the phone bridge does; returns how many ms went in before the end was heard (null: not heard). */
function feed(listener: GreetingEnd, pcm: Int16Array, ended: () => boolean): number | null {
  const frame = RATE / 50;
  for (let offset = 0; offset < pcm.length; offset += frame) {
    listener.audio(pcm.subarray(offset, offset + frame));
    if (ended()) return ((offset + frame) * 1000) / RATE;
  }
  return null;
}

describe('the end of an answering machine\'s greeting', () => {
  it('is the end of its beep, not a moment before, and not its words', async () => {
    const words = overThePhone(await synthesizeSpeech('Hi, you have reached Ann. Please leave a message after the beep.'));
    let over = false;
    const listener = new GreetingEnd(true, RATE, () => (over = true));
    // The greeting's speech, however long, is no beep (the VAD says when speech stops).
    expect(feed(listener, words, () => over)).toBeNull();
    expect(feed(listener, silence(300), () => over)).toBeNull();
    // A 400 ms beep, then the silence the machine records in: over as the tone stops.
    const line = overThePhone(new Int16Array([...tone(1_000, 400), ...silence(300)]));
    const heardAt = feed(listener, line, () => over);
    expect(heardAt).toBeGreaterThanOrEqual(400);
    expect(heardAt).toBeLessThanOrEqual(440);
  });

  it('is a second of silence after speech: the VAD ends the turn', () => {
    let over = false;
    const listener = new GreetingEnd(false, RATE, () => (over = true));
    listener.speechStarted();
    // Speaking: the audio's own silence is the VAD's to judge.
    expect(feed(listener, silence(3_000), () => over)).toBeNull();
    listener.turnEnded();
    expect(over).toBe(true);
  });

  it('is a second with no speech after the verdict, when the machine was not speaking as it came', () => {
    let over = false;
    const listener = new GreetingEnd(false, RATE, () => (over = true));
    expect(feed(listener, silence(GREETING_END_SILENCE_MS - 100), () => over)).toBeNull();
    // Speech begins again: the second starts over.
    listener.speechStarted();
    expect(feed(listener, silence(500), () => over)).toBeNull();
    listener.turnEnded();
    expect(over).toBe(true);

    let quietOver = false;
    const quiet = new GreetingEnd(false, RATE, () => (quietOver = true));
    expect(feed(quiet, silence(2_000), () => quietOver)).toBe(GREETING_END_SILENCE_MS);
  });

  it('is called once, and at the latest after GREETING_MAX_MS of a machine that talks on', () => {
    let calls = 0;
    const listener = new GreetingEnd(true, RATE, () => calls++);
    expect(feed(listener, silence(GREETING_MAX_MS + 1_000), () => calls > 0)).toBe(GREETING_MAX_MS);
    listener.turnEnded();
    feed(listener, overThePhone(tone(1_000, 400)), () => false);
    feed(listener, silence(100), () => false);
    expect(calls).toBe(1);
    expect(listener.isOver).toBe(true);
  });

  it('takes no steady hum or quiet tone for a beep', () => {
    let over = false;
    const listener = new GreetingEnd(true, RATE, () => (over = true));
    // Mains hum (too low), and a beep-like tone far below a beep's level.
    expect(feed(listener, overThePhone(tone(60, 1_000, 10_000)), () => over)).toBeNull();
    expect(feed(listener, overThePhone(tone(1_000, 600, 300)), () => over)).toBeNull();
    expect(feed(listener, silence(100), () => over)).toBeNull();
  });
});
