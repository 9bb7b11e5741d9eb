import { expect, test } from 'vitest';
import { TurnDetector } from '../../server/engine/turn-detector.ts';

// A flow state's `endpointing_ms` (docs/flows.md#extended-flow-keys) sets the silence that ends the
// caller's turn: counted in samples fed, not in wall time. Positions below are in ms of 20 ms
// frames.
const FRAME_SAMPLES = 320;

function feed(detector: TurnDetector, ms: number, probability: number): string[] {
  const events: string[] = [];
  for (let t = 0; t < ms; t += 20) {
    const event = detector.push(probability, FRAME_SAMPLES);
    if (event) events.push(`${event.type}@${event.atSample / 16}`);
  }
  return events;
}

test.each([
  { endpointing: null, silenceBeforeEnd: 500 },
  { endpointing: 1200, silenceBeforeEnd: 1200 },
  { endpointing: 200, silenceBeforeEnd: 200 },
])('a turn ends after $silenceBeforeEnd ms of silence when the state asks for $endpointing', ({ endpointing, silenceBeforeEnd }) => {
  const detector = new TurnDetector();
  detector.setEndSilenceMs(endpointing);
  expect(feed(detector, 400, 0.9)).toEqual(['speech_started@200']);
  expect(feed(detector, silenceBeforeEnd - 20, 0.05)).toEqual([]);
  expect(feed(detector, 20, 0.05)).toEqual([`turn_ended@${400 + silenceBeforeEnd}`]);
});

test('a state entered mid-turn ends the turn by its own length, and null goes back to the server default', () => {
  const detector = new TurnDetector();
  feed(detector, 400, 0.9);
  feed(detector, 300, 0.05);
  detector.setEndSilenceMs(1000);
  expect(feed(detector, 600, 0.05)).toEqual([]);
  expect(feed(detector, 100, 0.05)).toEqual(['turn_ended@1400']);
  detector.setEndSilenceMs(null);
  feed(detector, 400, 0.9);
  expect(feed(detector, 500, 0.05)).toEqual(['turn_ended@2300']);
});
