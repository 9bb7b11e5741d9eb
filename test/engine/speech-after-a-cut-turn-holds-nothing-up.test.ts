import { describe, expect, it } from 'vitest';
import { AudioOut, FRAME_SAMPLES } from '../../server/engine/audio-out.ts';
import { SpeechQueue } from '../../server/engine/speech-queue.ts';
import type { TextToSpeech } from '../../server/providers/types.ts';

// A line said through a turn's speech queue after the turn was cut (an http tool's answer, and
// the line of the state it chose, can come after a barge-in) must not sit in the output queue
// unfinished: the next reply would wait behind it and the caller would hear nothing.
const tts: TextToSpeech = {
  provider: 'test',
  async *synthesize() {
    yield new Int16Array(FRAME_SAMPLES * 3);
  },
};

describe('a speech queue whose turn was cut', () => {
  it('says nothing more, and the next reply plays', async () => {
    const sent: Int16Array[] = [];
    let now = 0;
    const out = new AudioOut({ sendFrame: (f) => sent.push(f), onStarted: () => {}, onFinished: () => {} }, () => now);
    const cut = new AbortController();
    cut.abort();
    new SpeechQueue(tts, out, cut.signal, null, () => {}).say('You are booked for Tuesday.', null);
    expect(out.isBusy).toBe(false);

    out.beginReply();
    const next = new SpeechQueue(tts, out, new AbortController().signal, null, () => {});
    next.say('Anything else?', 1);
    await next.finished();
    out.endReply();
    for (let t = 0; t < 200; t += 5) {
      now += 5;
      out.tick();
    }
    expect(sent.length).toBe(3);
    expect(out.isBusy).toBe(false);
  });
});
