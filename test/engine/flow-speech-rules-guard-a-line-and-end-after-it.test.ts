import { afterEach, expect, it, vi } from 'vitest';
import { AudioClock, AudioOut } from '../../server/engine/audio-out.ts';
import { ConversationHistory } from '../../server/engine/conversation-history.ts';
import { FlowSpeechRules } from '../../server/engine/flow-speech-rules.ts';
import { SpeechQueue } from '../../server/engine/speech-queue.ts';
import type { StateEntry, TransferAction } from '../../server/flow/runtime-types.ts';
import type { ServerEvent } from '../../server/protocol/events.ts';
import { scriptedVoice } from '../fakes/scripted-providers.ts';

// The flow's speech rules alone, on the fake clock: state entries and the agent falling quiet in →
// the guard on the caller's speech, what is said, and the end it asks for out.
const clock = new AudioClock();
afterEach(() => void vi.useRealTimers());

function flowSpeech() {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'] });
  const lifetime = new AbortController();
  const events: ServerEvent[] = [];
  const ends: string[] = [];
  const transfers: TransferAction[] = [];
  let rules: FlowSpeechRules | null = null;
  const audioOut = new AudioOut({ sendFrame: () => {}, onStarted: () => {}, onFinished: () => rules?.afterAgentSpoke() });
  clock.add(audioOut);
  const voice = scriptedVoice({ msPerWord: 200 });
  rules = new FlowSpeechRules(
    {
      audioOut,
      history: new ConversationHistory(),
      send: (event) => void events.push(event),
      lineSpeech: () => new SpeechQueue(voice, audioOut, lifetime.signal, null, () => {}),
      turnInFlight: () => false,
      isEnded: () => ends.length > 0,
      end: (reason) => void ends.push(reason),
      transfer: (action) => void transfers.push(action),
      lastActivityAt: () => performance.now(),
    },
    null,
  );
  const enters = (entry: Partial<StateEntry>) => {
    const speech = new SpeechQueue(voice, audioOut, lifetime.signal, null, () => {});
    audioOut.beginReply();
    rules!.entered({ state: 's', say: null, endSession: false, respond: false, resetContext: false, interruptible: true, ...entry }, speech);
    void speech.finished().then(() => audioOut.endReply());
  };
  const done = () => {
    lifetime.abort();
    clock.remove(audioOut);
  };
  return { rules, events, ends, transfers, enters, run: (ms: number) => vi.advanceTimersByTimeAsync(ms), done };
}

it('guards the caller speech gate while an interruptible: false line plays, and lifts it after', async () => {
  const f = flowSpeech();
  f.enters({ say: 'Calls are recorded for quality.', interruptible: false });
  expect(f.rules.guardsCallerSpeech).toBe(true);
  expect(f.events).toEqual([{ type: 'transcript', role: 'agent', text: 'Calls are recorded for quality.', final: true }]);
  // Five words of 200 ms: the line has played within a second and a bit of lead.
  await f.run(500);
  expect(f.rules.guardsCallerSpeech).toBe(true);
  await f.run(1_000);
  expect(f.rules.guardsCallerSpeech).toBe(false);
  f.done();
});

it('ends the call after the line of a state that ends it has been heard, not before', async () => {
  const f = flowSpeech();
  f.enters({ say: 'Goodbye then.', endSession: true });
  await f.run(200);
  expect(f.ends).toEqual([]);
  await f.run(1_000);
  expect(f.ends).toEqual(['flow_ended']);
  f.done();
});

it('hands the caller on after the line of a state that transfers has been heard, not before', async () => {
  const f = flowSpeech();
  const transfer: TransferAction = { to: '+15551234567', mode: 'cold', summary: false, onFailed: 'menu' };
  f.enters({ say: 'Connecting you to the front desk.', transfer });
  await f.run(200);
  expect(f.transfers).toEqual([]);
  await f.run(1_500);
  expect(f.transfers).toEqual([transfer]);
  // Handing on is not the flow ending the call: the transport says when the caller has gone.
  expect(f.ends).toEqual([]);
  f.done();
});
