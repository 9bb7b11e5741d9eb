import { afterEach, expect, it, vi } from 'vitest';
import type { Frame } from '../../server/engine/frames.ts';
import { SpokenTurns } from '../../server/engine/spoken-turns.ts';
import type { ServerEvent } from '../../server/protocol/events.ts';
import { ProviderError, type SpeechToText } from '../../server/providers/types.ts';
import { scriptedTranscriber } from '../fakes/scripted-providers.ts';

// The STT stage alone, frames in → frames and events out, on the fake clock.
afterEach(() => void vi.useRealTimers());

function spokenTurns(stt: SpeechToText | null) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  const lifetime = new AbortController();
  /** What came out, in order: `frame <type>` handed on, `event <type>` for the client. */
  const out: string[] = [];
  const frames: Frame[] = [];
  let turns = 0;
  const stage = new SpokenTurns(
    { stt, sttOptions: { language: 'en' }, sttFlushTimeoutMs: 8_000, signal: lifetime.signal, nextTurnNumber: () => ++turns },
    {
      push: (frame) => {
        frames.push(frame);
        out.push(`frame ${frame.type}`);
      },
      send: (event: ServerEvent) => void out.push(`event ${event.type}`),
    },
  );
  const speaks = () => stage.push({ type: 'speech_started', preRoll: new Int16Array(1_600) });
  const says = () => stage.push({ type: 'caller_speech', pcm: new Int16Array(320) });
  const stops = () => stage.push({ type: 'turn_ended', lastVoicedAt: performance.now() - 500 });
  return { stage, out, frames, lifetime, speaks, says, stops };
}

it('interrupts the agent as the caller starts, and hands their words on as a numbered turn', async () => {
  const stt = scriptedTranscriber(['Is it an animal?'], { flushAfterMs: 120 });
  const t = spokenTurns(stt);
  t.speaks();
  t.says();
  t.stops();
  await vi.advanceTimersByTimeAsync(200);
  expect(t.out).toEqual(['event user_started_speaking', 'frame interrupt', 'event user_stopped_speaking', 'frame caller_turn']);
  // The recognizer heard the pre-roll and the speech after it.
  expect(stt.samplesHeard()).toBe(1_920);
  const turn = t.frames.at(-1);
  expect(turn?.type === 'caller_turn' && [turn.text, turn.timing.turn, turn.timing.metrics().endpointing_ms, turn.timing.metrics().stt_ms]).toEqual([
    'Is it an animal?',
    1,
    500,
    120,
  ]);
});

it('keeps words the caller went on talking over for the next turn, without answering them', async () => {
  const t = spokenTurns(scriptedTranscriber(['Is it', 'a dog?'], { flushAfterMs: 100 }));
  t.speaks();
  t.stops();
  t.speaks();
  await vi.advanceTimersByTimeAsync(150);
  t.stops();
  await vi.advanceTimersByTimeAsync(150);
  expect(t.frames.filter((f) => f.type === 'caller_words' || f.type === 'caller_turn').map((f) => ('text' in f ? [f.type, f.text] : null))).toEqual([
    ['caller_words', 'Is it'],
    ['caller_turn', 'a dog?'],
  ]);
});

it('gives no turn for a transcript with no words in it', async () => {
  const t = spokenTurns(scriptedTranscriber(['   ']));
  t.speaks();
  t.stops();
  await vi.advanceTimersByTimeAsync(10);
  expect(t.out).toEqual(['event user_started_speaking', 'frame interrupt', 'event user_stopped_speaking']);
});

it('reports a recognizer that fails as an error frame, and one that is missing to the client', async () => {
  const failing: SpeechToText = {
    provider: 'failing',
    open: () => ({
      onInterim: null,
      write() {},
      flush: () => Promise.reject(new ProviderError('failing', 'server', 'down')),
      close() {},
    }),
  };
  const t = spokenTurns(failing);
  t.speaks();
  t.stops();
  await vi.advanceTimersByTimeAsync(10);
  expect(t.out).toEqual(['event user_started_speaking', 'frame interrupt', 'event user_stopped_speaking', 'frame error']);

  const none = spokenTurns(null);
  none.speaks();
  none.stops();
  await vi.advanceTimersByTimeAsync(10);
  expect(none.out).toEqual(['event user_started_speaking', 'frame interrupt', 'event user_stopped_speaking', 'event error']);
});

it('is silent once the session has ended', async () => {
  const t = spokenTurns(scriptedTranscriber(['Hello?'], { flushAfterMs: 100 }));
  t.speaks();
  t.stops();
  t.lifetime.abort();
  await vi.advanceTimersByTimeAsync(150);
  t.speaks();
  expect(t.out).toEqual(['event user_started_speaking', 'frame interrupt', 'event user_stopped_speaking']);
});
