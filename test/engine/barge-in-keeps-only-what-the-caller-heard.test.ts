import { expect, it } from 'vitest';
import { AudioOut, FRAME_SAMPLES } from '../../server/engine/audio-out.ts';
import { interruptAgent } from '../../server/engine/barge-in.ts';
import { ConversationHistory } from '../../server/engine/conversation-history.ts';
import type { ServerEvent } from '../../server/protocol/events.ts';

// The interrupt control frame's handler alone: an agent reply half sent in → the client's events
// and the model's memory out.
function speakingAgent() {
  let now = 0;
  let framesSent = 0;
  const audioOut = new AudioOut({ sendFrame: () => void framesSent++, onStarted: () => {}, onFinished: () => {} }, () => now);
  const history = new ConversationHistory();
  const events: ServerEvent[] = [];
  const target = { audioOut, history, send: (event: ServerEvent) => void events.push(event), sendMetrics: () => {} };
  /** Plays `ms` of what is queued, in 20 ms ticks of the audio clock. */
  const play = (ms: number) => {
    for (let t = 0; t < ms; t += 20) {
      now += 20;
      audioOut.tick();
    }
  };
  return { audioOut, history, events, target, play, framesSent: () => framesSent };
}

it('stops the audio, says interrupted, and leaves the model only the words that were sent', () => {
  const a = speakingAgent();
  const reply = 'One two three four. Five six seven eight.';
  const tag = a.history.nextIndex;
  a.history.addAssistant(reply);
  a.audioOut.beginReply();
  // Each sentence is 400 ms of audio: 100 ms a word.
  for (const sentence of ['One two three four.', 'Five six seven eight.']) {
    const segment = a.audioOut.beginSegment(sentence, tag);
    segment.append(new Int16Array(FRAME_SAMPLES * 20));
    segment.complete();
  }
  // 500 ms played; audio out sends OUTPUT_LEAD_MS (two frames) ahead and its first frame at once,
  // so 560 ms were sent: the first sentence, and 160 ms of the second, one word and a half.
  a.play(500);
  const sentBefore = a.framesSent();

  interruptAgent(a.target, null);
  a.play(1_000);

  expect(a.framesSent()).toBe(sentBefore);
  expect(a.events).toEqual([
    { type: 'interrupted' },
    { type: 'agent_stopped_speaking' },
    { type: 'transcript', role: 'agent', text: 'One two three four. Five', final: true, interrupted: true },
  ]);
  expect(a.history.snapshot()).toEqual([{ role: 'assistant', content: 'One two three four. Five…' }]);
});

it('says nothing when the agent had nothing in flight', () => {
  const a = speakingAgent();
  a.history.addAssistant('Hello.');
  interruptAgent(a.target, null);
  expect(a.events).toEqual([]);
  expect(a.history.snapshot()).toEqual([{ role: 'assistant', content: 'Hello.' }]);
});
