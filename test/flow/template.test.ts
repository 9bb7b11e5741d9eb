import { describe, it, expect } from 'vitest';
import { findPlaceholders, renderTemplate } from '../../server/flow/template.ts';

describe('renderTemplate', () => {
  it.each([
    ['a string variable renders as its text', 'Guess {thing}!', { thing: 'a cat' }, 'Guess a cat!'],
    ['a number renders with String()', '{asked} of 10', { asked: 3.5 }, '3.5 of 10'],
    ['booleans render as true and false', '{yes}/{no}', { yes: true, no: false }, 'true/false'],
    ['a missing variable renders as empty text', 'Secret: [{secret}]', {}, 'Secret: []'],
    ['the same placeholder renders every time it appears', '{a}{a}-{b}', { a: 'x', b: 0 }, 'xx-0'],
    ['doubled braces are literal braces', '{{literal}} and {{ }}', { literal: 'no' }, '{literal} and { }'],
    ['an escape next to a placeholder keeps both', '{{{a}}}', { a: 'v' }, '{v}'],
    ['brace text that is not a name stays as written', '{ not a name } {1x} {a-b}', { a: 'v' }, '{ not a name } {1x} {a-b}'],
    ['JSON stays as written', 'Reply like {"ok":true}', { ok: 'no' }, 'Reply like {"ok":true}'],
    ['a lone opening brace stays as written', 'a { b {name', { name: 'v' }, 'a { b {name'],
    ['a lone closing brace stays as written', 'a } b', {}, 'a } b'],
    ['an empty placeholder stays as written', 'a {} b', {}, 'a {} b'],
    ['Object.prototype members are not variables', '[{constructor}][{toString}]', {}, '[][]'],
    ['underscores and digits are allowed in names', '{_a1}{B_2}', { _a1: 'x', B_2: 'y' }, 'xy'],
  ])('%s', (_behaviour, text, variables, expected) => {
    expect(renderTemplate(text, variables)).toBe(expected);
  });

  it('never throws on arbitrary brace soup', () => {
    for (const text of ['{', '}', '{{', '}}', '{{{', '}}}', '{a', 'a}', '{{a}', '{a}}', '}{a}{']) {
      expect(() => renderTemplate(text, { a: 'v' })).not.toThrow();
    }
    expect(renderTemplate('{{a}', { a: 'v' })).toBe('{a}');
    expect(renderTemplate('{a}}', { a: 'v' })).toBe('v}');
  });
});

describe('findPlaceholders', () => {
  it('finds every placeholder with the offset of its opening brace', () => {
    expect(findPlaceholders('Hi {name}, you asked {questions_asked} of {name}.')).toEqual([
      { name: 'name', offset: 3 },
      { name: 'questions_asked', offset: 21 },
      { name: 'name', offset: 42 },
    ]);
  });

  it('skips escaped braces, JSON and brace text that is not a name', () => {
    expect(findPlaceholders('{{escaped}} {"a":1} { spaced } {ok}')).toEqual([{ name: 'ok', offset: 31 }]);
  });

  it('finds the placeholder inside a triple brace after the escape', () => {
    expect(findPlaceholders('{{{inner}}}')).toEqual([{ name: 'inner', offset: 2 }]);
  });

  it('finds nothing in text without placeholders', () => {
    expect(findPlaceholders('plain text')).toEqual([]);
    expect(findPlaceholders('')).toEqual([]);
  });
});
