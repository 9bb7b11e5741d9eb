import { expect, test } from 'vitest';
import { FLITE_MAX_CHARS, cleanTextForFlite, splitForFlite } from '../../../server/providers/tts/flite.ts';

test.each([
  ['Café déjà vu', 'Cafe deja vu'],
  ['“Quoted” and ‘single’ — dashes… fine', '"Quoted" and \'single\' , dashes... fine'],
  ['**Bold** and `code` and # heading', 'Bold and code and heading'],
  ['Thumbs up 👍 and 日本 text', 'Thumbs up and text'],
  ['$5 & 10% off!', '$5 & 10% off!'],
  ['...', ''],
])('%j is said as %j', (input, spoken) => {
  expect(cleanTextForFlite(input)).toBe(spoken);
});

test('text within the limit is one run', () => {
  expect(splitForFlite('One. Two.')).toEqual(['One. Two.']);
});

test('long text is split at sentence ends into runs within the limit, losing nothing', () => {
  const sentence = 'This sentence is about sixty characters long, give or take. ';
  const text = sentence.repeat(40).trim();
  const parts = splitForFlite(text);
  expect(parts.length).toBeGreaterThan(1);
  expect(parts.every((part) => part.length <= FLITE_MAX_CHARS && part.endsWith('take.'))).toBe(true);
  expect(parts.join(' ')).toBe(text);
});

test('a single sentence longer than the limit is cut at spaces', () => {
  const text = 'word '.repeat(500).trim();
  const parts = splitForFlite(text);
  expect(parts.every((part) => part.length <= FLITE_MAX_CHARS && !part.startsWith(' ') && !part.endsWith(' '))).toBe(true);
  expect(parts.join(' ')).toBe(text);
});
