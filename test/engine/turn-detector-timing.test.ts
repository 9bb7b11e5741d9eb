import { expect, test } from 'vitest';
import { TurnDetector } from '../../server/engine/turn-detector.ts';
import type { TurnEvent } from '../../server/engine/turn-detector.ts';

// Probabilities in 20 ms frames (320 samples at 16 kHz); positions below are in ms.
const FRAME_MS = 20;
type Span = [ms: number, probability: number];

function run(spans: Span[]): Array<Record<string, number | string>> {
  const detector = new TurnDetector();
  const events: TurnEvent[] = [];
  for (const [ms, probability] of spans) {
    for (let t = 0; t < ms; t += FRAME_MS) {
      const event = detector.push(probability, (FRAME_MS * 16_000) / 1000);
      if (event) events.push(event);
    }
  }
  // In ms, for readable expectations.
  return events.map(({ type, ...positions }) => ({ type, ...Object.fromEntries(Object.entries(positions).map(([k, v]) => [k, v / 16])) }));
}

const SILENCE = 0.05;
const SPEECH = 0.9;

test.each<[string, Span[], Array<Record<string, number | string>>]>([
  ['a 180 ms blip never starts a turn', [[300, SILENCE], [180, SPEECH], [1000, SILENCE]], []],
  [
    'speech is confirmed after exactly 200 ms, dated from its first voiced frame',
    [[300, SILENCE], [200, SPEECH]],
    [{ type: 'speech_started', speechStartSample: 300, atSample: 500 }],
  ],
  [
    'two blips with a gap between them do not add up to speech',
    [[100, SPEECH], [20, SILENCE], [100, SPEECH], [600, SILENCE]],
    [],
  ],
  [
    'a 400 ms pause does not end the turn; the turn ends 500 ms after the last voiced frame',
    [[100, SILENCE], [500, SPEECH], [400, SILENCE], [300, SPEECH], [600, SILENCE]],
    [
      { type: 'speech_started', speechStartSample: 100, atSample: 300 },
      { type: 'turn_ended', speechStartSample: 100, speechEndSample: 1300, atSample: 1800 },
    ],
  ],
  [
    'exactly 500 ms of silence ends the turn',
    [[300, SPEECH], [500, SILENCE]],
    [
      { type: 'speech_started', speechStartSample: 0, atSample: 200 },
      { type: 'turn_ended', speechStartSample: 0, speechEndSample: 300, atSample: 800 },
    ],
  ],
  ['probabilities between the thresholds never start speech', [[2000, 0.45]], []],
  [
    'once speaking, probabilities between the thresholds keep it going (hysteresis)',
    [[100, 0.6], [1000, 0.4], [500, 0.3]],
    [
      { type: 'speech_started', speechStartSample: 0, atSample: 200 },
      { type: 'turn_ended', speechStartSample: 0, speechEndSample: 1100, atSample: 1600 },
    ],
  ],
  [
    'a second utterance after the turn ended is a new turn',
    [[300, SPEECH], [600, SILENCE], [300, SPEECH], [500, SILENCE]],
    [
      { type: 'speech_started', speechStartSample: 0, atSample: 200 },
      { type: 'turn_ended', speechStartSample: 0, speechEndSample: 300, atSample: 800 },
      { type: 'speech_started', speechStartSample: 900, atSample: 1100 },
      { type: 'turn_ended', speechStartSample: 900, speechEndSample: 1200, atSample: 1700 },
    ],
  ],
])('%s', (_name, spans, expected) => {
  expect(run(spans)).toEqual(expected);
});

test('frames of 32 ms (Silero) confirm speech at the first frame boundary past 200 ms', () => {
  const detector = new TurnDetector();
  const events = Array.from({ length: 8 }, () => detector.push(0.9, 512)).filter(Boolean);
  expect(events).toEqual([{ type: 'speech_started', speechStartSample: 0, atSample: 7 * 512 }]);
});

test('a deactivation threshold above the activation threshold is refused', () => {
  expect(() => new TurnDetector({ activationThreshold: 0.4, deactivationThreshold: 0.6 })).toThrow(RangeError);
});
