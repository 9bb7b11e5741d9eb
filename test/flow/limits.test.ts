import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseFlow } from '../../server/flow/parse.ts';
import { MAX_NESTING_DEPTH } from '../../server/flow/nesting.ts';
import { parseFlowTests } from '../../server/flow/tests-format.ts';
import { aliasBomb } from '../support/generate-flow.ts';

const GAME = readFileSync(new URL('../../resources/flows/guessing-game.yaml', import.meta.url), 'utf8');

describe('hostile and oversized flow documents', () => {
  it('refuses a nested alias bomb before expanding it, with a reason', () => {
    // Expanded, it would not fit in memory: the test ends at all only if parsing stops first.
    // How long the refusal takes is measured by the flow-parse bench.
    const result = parseFlow(aliasBomb());
    expect(result.document).toBeNull();
    expect(result.diagnostics.map((d) => d.code)).toEqual(['too_many_aliases']);
  });

  it('refuses more than 100 aliases and points at the first one over the limit', () => {
    const aliases = Array.from({ length: 101 }, (_, i) => `  k${i}: *t`).join('\n');
    const result = parseFlow(`text: &t hello\nmore:\n${aliases}\n`);
    expect(result.diagnostics).toHaveLength(1);
    expect(result.diagnostics[0]).toMatchObject({ code: 'too_many_aliases', line: 103, column: 9 });
  });

  it('accepts a flow that uses a few aliases to share a tool definition', () => {
    const shared = GAME.replace(
      '      play_again:\n        description: The caller wants another round. Starts a new game.\n        speech_cue: "Great, let\'s go again!"\n    transitions:\n      on_tool_call:\n        play_again: setup\n\n  lost:',
      '      play_again: &again\n        description: The caller wants another round. Starts a new game.\n        speech_cue: "Great, let\'s go again!"\n    transitions:\n      on_tool_call:\n        play_again: setup\n\n  lost:',
    ).replace(
      /(  lost:[\s\S]*?    tools:\n)      play_again:\n        description: .*\n        speech_cue: .*\n/,
      '$1      play_again: *again\n',
    );
    expect(shared).toContain('*again');
    const result = parseFlow(shared);
    expect(result.diagnostics).toEqual([]);
    expect(result.document?.states.lost?.tools?.play_again?.speech_cue).toBe("Great, let's go again!");
  });

  it('refuses a document over 256 KiB without parsing it', () => {
    const padding = `# ${'x'.repeat(1000)}\n`.repeat(270);
    const result = parseFlow(GAME + padding);
    expect(result.document).toBeNull();
    expect(result.diagnostics).toEqual([expect.objectContaining({ code: 'document_too_large', line: 1, column: 1 })]);
  });

  it('counts the size in UTF-8 bytes, not characters', () => {
    const euros = `# ${'€'.repeat(90_000)}\n`; // 90,000 characters, 270,000 bytes
    expect(parseFlow(GAME + euros).diagnostics[0]?.code).toBe('document_too_large');
    const fits = `# ${'€'.repeat(80_000)}\n`; // 240,000 bytes
    expect(parseFlow(GAME + fits).diagnostics).toEqual([]);
  });

  // Each shape a nesting can take, 5,000 levels deep (the yaml library's own reader overflows its
  // stack long before), and just past the limit: a clear refusal at the line where it went too deep.
  // `levels`: maps and lists one inside the other, the document's own map the first.
  const SHAPES: Array<{ shape: string; make: (levels: number) => { yaml: string; tooDeepAt: number } }> = [
    { shape: 'flow lists', make: (n) => ({ yaml: `id: x\nsettings:\n  extra: ${'['.repeat(n - 2)}${']'.repeat(n - 2)}\n`, tooDeepAt: 3 }) },
    { shape: 'flow maps', make: (n) => ({ yaml: `id: x\nsettings:\n  extra: ${'{a: '.repeat(n - 2)}1${'}'.repeat(n - 2)}\n`, tooDeepAt: 3 }) },
    { shape: 'block lists', make: (n) => ({ yaml: `id: x\nitems:\n${'- '.repeat(n - 1)}x\n`, tooDeepAt: 3 }) },
    {
      shape: 'block maps, a level a line',
      // Line i holds the key of the map at depth i: the first map too deep starts on the line after the limit.
      make: (n) => ({ yaml: `${Array.from({ length: n }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n')} end\n`, tooDeepAt: MAX_NESTING_DEPTH + 1 }),
    },
  ];
  it.each(SHAPES)('refuses $shape nested past the limit with too_deeply_nested at the line, not a stack overflow', ({ make }) => {
    let tried = 0;
    for (const levels of [MAX_NESTING_DEPTH + 1, 200, 5_000]) {
      const { yaml, tooDeepAt } = make(levels);
      // Block maps 5,000 deep are megabytes of indentation: refused as too large before this.
      if (new TextEncoder().encode(yaml).length > 256 * 1024) continue;
      tried++;
      const result = parseFlow(yaml);
      expect(result.document).toBeNull();
      expect(result.diagnostics.map((d) => d.code), `${levels} levels`).toEqual(['too_deeply_nested']);
      expect(result.diagnostics[0]!.message).toContain(`at most ${MAX_NESTING_DEPTH}`);
      expect(result.diagnostics[0]!.message).not.toMatch(/call stack/i);
      expect(result.diagnostics[0]!.line, `${levels} levels`).toBe(tooDeepAt);
    }
    expect(tried).toBeGreaterThanOrEqual(2);
  });

  it.each(SHAPES)('reads $shape nested exactly as deep as allowed', ({ make }) => {
    const codes = parseFlow(make(MAX_NESTING_DEPTH).yaml).diagnostics.map((d) => d.code);
    expect(codes).not.toContain('too_deeply_nested');
    expect(codes).not.toContain('yaml_syntax');
  });

  it('refuses a document whose aliases nest it too deep once expanded', () => {
    // Each anchor is 21 levels deep where it is written; the last, expanded, over 80.
    const levels = ['a0: &a0 [1]'];
    for (let i = 1; i <= 4; i++) levels.push(`a${i}: &a${i} ${'['.repeat(20)}*a${i - 1}${']'.repeat(20)}`);
    const result = parseFlow(`${levels.join('\n')}\n`);
    expect(result.diagnostics.map((d) => d.code)).toEqual(['too_deeply_nested']);
    expect(result.diagnostics[0]!.message).toContain('aliases expanded');
  });

  it('refuses a flow test nested too deep the same way', () => {
    const result = parseFlowTests(`name: deep\nsteps:\n  - user: hi\n    expect: {variables: {x: ${'['.repeat(5_000)}${']'.repeat(5_000)}}}\n`, null);
    expect(result.diagnostics.map((d) => d.code)).toEqual(['too_deeply_nested']);
    expect(result.diagnostics[0]).toMatchObject({ line: 4 });
    expect(result.diagnostics[0]!.message).toContain(`at most ${MAX_NESTING_DEPTH}`);
  });

  it('reads unicode state names, prompts and emoji as designers write them', () => {
    const yaml = GAME.replace(/\bwon\b/g, 'gewonnen✨').replace('Yes! That\'s it!', '¡Sí! Eso es 🎉');
    const result = parseFlow(yaml);
    expect(result.diagnostics).toEqual([]);
    expect(result.document?.states['gewonnen✨']).toBeDefined();
  });

  it('gives a clear error for tabs, binary garbage and a lone document marker', () => {
    for (const text of ['\tid: x', '\u0000\u0001\u0002', '---\n...\n---', '{{{{', ']]]]', '&a *a', '!!binary AAAA']) {
      const result = parseFlow(text);
      expect(result.document, text).toBeNull();
      expect(result.diagnostics.some((d) => d.severity === 'error'), text).toBe(true);
    }
  });
});
