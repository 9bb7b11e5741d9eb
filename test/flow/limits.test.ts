import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseFlow } from '../../server/flow/parse.ts';
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
