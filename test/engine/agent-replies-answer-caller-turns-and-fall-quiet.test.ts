import { afterEach, expect, it, vi } from 'vitest';
import { AgentReplies } from '../../server/engine/agent-replies.ts';
import { AudioClock, AudioOut } from '../../server/engine/audio-out.ts';
import { ConversationHistory } from '../../server/engine/conversation-history.ts';
import type { Frame } from '../../server/engine/frames.ts';
import { TurnTiming } from '../../server/engine/turn-timing.ts';
import type { ServerEvent } from '../../server/protocol/events.ts';
import { scriptedModel, scriptedVoice, type ScriptedReply } from '../fakes/scripted-providers.ts';

// The agent stage alone: caller turns in → the client's events, the agent's audio and the
// frames it hands on (agent_quiet, errors, warnings) out, on the fake clock.
afterEach(() => void vi.useRealTimers());
/** Each test's audio clock is stopped after it. */
const cleanups: Array<() => void> = [];
const onEnd = (cleanup: () => void) => void cleanups.push(cleanup);
afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()));

function agentStage(replies: ScriptedReply[] | null) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'] });
  const lifetime = new AbortController();
  const history = new ConversationHistory();
  const model = replies ? scriptedModel(replies) : null;
  const out: string[] = [];
  const events: ServerEvent[] = [];
  let audioFrames = 0;
  const audioOut = new AudioOut({ sendFrame: () => void audioFrames++, onStarted: () => {}, onFinished: () => {} });
  const clock = new AudioClock();
  clock.add(audioOut);
  let turns = 0;
  const send = (event: ServerEvent) => {
    events.push(event);
    out.push(`event ${event.type}`);
  };
  const stage = new AgentReplies(
    {
      llm: model,
      tts: scriptedVoice({ msPerWord: 200 }),
      assistantPrompt: 'You are a helpful voice assistant.',
      audioOut,
      signal: lifetime.signal,
      nextTurnNumber: () => ++turns,
      commit: { runtime: null, history, send, hook: () => {} },
    },
    {
      push: (frame: Frame) => void out.push(frame.type === 'error' || frame.type === 'warning' ? `frame ${frame.type} ${frame.code}` : `frame ${frame.type}`),
      send,
    },
  );
  const asks = (text: string) => stage.push({ type: 'caller_turn', text, timing: new TurnTiming(++turns, 'typed') });
  const run = (ms: number) => vi.advanceTimersByTimeAsync(ms);
  onEnd(() => clock.remove(audioOut));
  return { stage, out, events, history, model, audioOut, asks, run, frames: () => audioFrames };
}

it('answers a caller turn in speech, shows both sides, and falls quiet once the reply is synthesized', async () => {
  const a = agentStage([{ text: 'A dog is an animal.', firstChunkAfterMs: 300 }]);
  a.asks('Is a dog an animal?');
  await a.run(2_000);
  expect(a.out).toEqual(['event transcript', 'event transcript', 'event metrics', 'frame agent_quiet']);
  expect(a.events.filter((e) => e.type === 'transcript').map((e) => e.type === 'transcript' && [e.role, e.text])).toEqual([
    ['user', 'Is a dog an animal?'],
    ['agent', 'A dog is an animal.'],
  ]);
  // Five words at 200 ms: a second of speech in 20 ms frames, all of it played.
  expect(a.frames()).toBe(50);
  expect(a.history.snapshot().map((m) => [m.role, m.content])).toEqual([
    ['user', 'Is a dog an animal?'],
    ['assistant', 'A dog is an animal.'],
  ]);
  expect(a.stage.turnInFlight).toBe(false);
});

it('remembers words that get no answer of their own and answers them with the next turn', async () => {
  const a = agentStage([{ text: 'Yes.' }]);
  a.stage.push({ type: 'caller_words', text: 'Is it' });
  expect(a.out).toEqual([]);
  a.asks('a dog?');
  await a.run(1_000);
  expect(a.model!.requests[0]!.messages.slice(1).map((m) => m.content)).toEqual(['Is it', 'a dog?']);
});

it('warns that no model is there instead of answering', async () => {
  const a = agentStage(null);
  a.asks('Hello?');
  await a.run(100);
  expect(a.out).toEqual(['event transcript', 'frame warning llm_unavailable']);
});

it('hands on a failed model as an error, and still reports the turn and falls quiet', async () => {
  const a = agentStage([{ fail: 'server' }]);
  a.asks('Hello?');
  await a.run(100);
  expect(a.out).toEqual(['event transcript', 'frame error llm_failed', 'event metrics', 'frame agent_quiet']);
});

it('gives up the turn in flight to the interrupt, which then owns its ending', async () => {
  const a = agentStage([{ text: 'A long answer that the caller will not wait for.', firstChunkAfterMs: 500 }]);
  a.asks('Tell me everything.');
  await a.run(100);
  const turn = a.stage.takeTurn();
  expect(turn?.timing.kind).toBe('typed');
  expect(a.stage.turnInFlight).toBe(false);
  turn!.abort();
  await a.run(2_000);
  expect(a.out).toEqual(['event transcript']);
  expect(a.frames()).toBe(0);
});
