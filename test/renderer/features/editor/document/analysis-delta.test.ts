// The flow worker's answers carry only what changed since the last one: for every edit the page
// rebuilds exactly the analysis the worker made (the data in the same key order, the document,
// the diagnostics and state lines), after each message went through a structured clone as
// postMessage sends it; and a keystroke inside one state sends that state alone.
import { describe, expect, it } from 'vitest';
import { AnalysisPacker, AnalysisUnpacker, type AnalysisMessage } from '../../../../../renderer/src/features/editor/document/analysis-delta.ts';
import { analyzeFlowText } from '../../../../../server/flow/graph/analyze.ts';
import { IncrementalAnalyzer } from '../../../../../renderer/src/features/editor/document/incremental-analysis.ts';
import { generateFlowYaml } from '../../../../support/generate-flow.ts';

const FLOW = generateFlowYaml(30);

const replace = (text: string, from: string, to: string) => {
  expect(text).toContain(from);
  return text.replace(from, to);
};

/** Each text through the worker's analyzer and packer, cloned, and unpacked on the page's side; the messages sent. */
function sendInTurn(texts: string[]): AnalysisMessage[] {
  const analyzer = new IncrementalAnalyzer();
  const packer = new AnalysisPacker();
  const unpacker = new AnalysisUnpacker();
  return texts.map((text) => {
    const message = structuredClone(packer.pack(analyzer.analyze(text)));
    const got = unpacker.unpack(message, text);
    const want = analyzeFlowText(text);
    expect(got).toEqual(want);
    // toEqual does not look at key order; the graph draws states in their order.
    expect(JSON.stringify(got)).toBe(JSON.stringify(want));
    expect(got.document === null).toBe(want.document === null);
    if (got.document !== null) expect(got.document).toBe(got.data);
    return message;
  });
}

describe('the worker answers an edit with what it changed', () => {
  it('sends the one state a keystroke changed, and the page has the others as they were', () => {
    const retargeted = replace(FLOW, 'skip0: s2 }', 'skip0: s20 }');
    const [first, second, third] = sendInTurn([FLOW, retargeted, FLOW]);
    expect(first!.data.kind).toBe('whole');
    for (const message of [second!, third!]) {
      expect(message.data.kind).toBe('changed');
      if (message.data.kind !== 'changed') continue;
      expect(message.data.changedStates.map(([name]) => name)).toEqual(['s0']);
      expect(message.data.values).toEqual([]);
    }
  });

  it('keeps the unchanged states the very objects the page had', () => {
    const analyzer = new IncrementalAnalyzer();
    const packer = new AnalysisPacker();
    const unpacker = new AnalysisUnpacker();
    const before = unpacker.unpack(structuredClone(packer.pack(analyzer.analyze(FLOW))), FLOW);
    const text = replace(FLOW, 'skip0: s2 }', 'skip0: s20 }');
    const after = unpacker.unpack(structuredClone(packer.pack(analyzer.analyze(text))), text);
    const oldStates = before.data!.states as Record<string, unknown>;
    const newStates = after.data!.states as Record<string, unknown>;
    expect(newStates.s1).toBe(oldStates.s1);
    expect(newStates.s0).not.toBe(oldStates.s0);
  });

  it('rebuilds the analysis through a broken state, a YAML error, a rename and a new state', () => {
    const dangling = replace(FLOW, 'skip0: s2 }', 'skip0: s2x }');
    const unreadable = replace(FLOW, 'skip0: s2 }', 'skip0: [s2 }');
    const renamed = FLOW.replaceAll(/\bs29\b/g, 's29b');
    const added = `${FLOW.trimEnd()}\n  extra:\n    agent: { prompt: Hello., tools: [] }\n`;
    const settings = replace(FLOW, 'version: "1.0.0"', 'version: "1.0.1"');
    const messages = sendInTurn([FLOW, dangling, unreadable, FLOW, renamed, FLOW, added, settings, FLOW]);
    expect(analyzeFlowText(dangling).document).toBeNull();
    expect(messages[2]!.data).toEqual({ kind: 'whole', data: null });
  });
});
