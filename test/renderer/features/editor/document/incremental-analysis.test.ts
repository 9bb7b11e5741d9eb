// Re-analysing only the state an edit changed: for every edit the editor's worker hands back
// exactly what a whole parse gives (the diagnostics where the designer sees them, the data the
// graph is drawn from, the state lines), and it takes the quick way only where it may.
import { describe, expect, it } from 'vitest';
import { analyzeFlowText } from '../../../../../server/flow/graph/analyze.ts';
import { IncrementalAnalyzer, spliced } from '../../../../../renderer/src/features/editor/document/incremental-analysis.ts';
import { generateFlowYaml } from '../../../../support/generate-flow.ts';
import { GUESSING_GAME_YAML } from '../../../../support/server.ts';

const FLOW = generateFlowYaml(30);

/**
 * Each text in turn through one analyzer, each result against the whole parse of the same text;
 * which of them took the quick way. The whole parse of a text comes back (a pure function), so a
 * text the sequence returns to (an edit taken back) is parsed whole once.
 */
function analyzeInTurn(texts: string[]): boolean[] {
  const whole = new Map<string, ReturnType<typeof analyzeFlowText>>();
  const wholeParse = (text: string) => whole.get(text) ?? whole.set(text, analyzeFlowText(text)).get(text)!;
  const analyzer = new IncrementalAnalyzer();
  let last = analyzer.analyze(texts[0]!);
  expect(last).toEqual(wholeParse(texts[0]!));
  return texts.slice(1).map((text) => {
    const quick = spliced(last, text) !== null;
    last = analyzer.analyze(text);
    expect(last).toEqual(wholeParse(text));
    return quick;
  });
}

const replace = (text: string, from: string, to: string) => {
  expect(text).toContain(from);
  return text.replace(from, to);
};

describe('an edit inside one state', () => {
  it('retargets a transition, to a state that exists and to one that does not, and back', () => {
    const retargeted = replace(FLOW, 'skip0: s2 }', 'skip0: s20 }');
    const dangling = replace(FLOW, 'skip0: s2 }', 'skip0: s2x }');
    expect(analyzeFlowText(dangling).diagnostics.length).toBeGreaterThan(0);
    expect(analyzeInTurn([FLOW, retargeted, FLOW, dangling, FLOW])).toEqual([true, true, true, true]);
  });

  it('takes the quick way on a flow over 64 KiB (200 states), which the size check must not refuse', () => {
    const big = generateFlowYaml(200);
    expect(big.length).toBeGreaterThan(64 * 1024);
    expect(analyzeInTurn([big, replace(big, 'skip0: s2 }', 'skip0: s20 }')])).toEqual([true]);
  });

  it('moves the diagnostics of later states down by the lines it adds, and up by those it removes', () => {
    const broken = replace(FLOW, 'skip20: s22 }', 'skip20: nowhere }');
    const longer = replace(broken, '      next3: { description: Go on. }\n', '      next3:\n        description: Go on.\n        speech_cue: On we go.\n');
    const prompt = replace(longer, 'Step 25; last answer {a25}.', 'Step 25; last answer {a25}, and {missing}.');
    const analyses = [broken, longer, prompt].map(analyzeFlowText);
    expect(analyses[0]!.diagnostics.length).toBeGreaterThan(0);
    expect(analyses[1]!.diagnostics[0]!.line).toBe(analyses[0]!.diagnostics[0]!.line + 2);
    expect(analyzeInTurn([broken, longer, prompt, longer, broken])).toEqual([true, true, true, true]);
  });

  it('keeps the comments and block style of the guessing game', () => {
    const cue = replace(GUESSING_GAME_YAML, 'speech_cue: "Great, let\'s go again!"', 'speech_cue: "Once more!"');
    const target = replace(GUESSING_GAME_YAML, '        play_again: setup\n\n  lost:', '        play_again: lost\n\n  lost:');
    expect(analyzeInTurn([GUESSING_GAME_YAML, cue, target, GUESSING_GAME_YAML])).toEqual([true, true, true]);
  });
});

describe('an edit it leaves to the whole parse', () => {
  it('renames a state, adds one, edits the settings, or breaks the YAML, and the result is still the whole parse\'s', () => {
    const renamed = replace(FLOW, '  s5:\n', '  five:\n');
    const added = replace(FLOW, '  s29:\n', '  extra:\n    agent: { prompt: Hi. }\n  s29:\n');
    const addedInside = FLOW + '  extra:\n    agent: { prompt: Hi. }\n';
    const settings = replace(FLOW, 'follows the flow step by step.', 'follows the flow.');
    const broken = replace(FLOW, 'skip7: { description: Skip one.', 'skip7: { description: [Skip one.');
    expect(analyzeInTurn([FLOW, renamed, FLOW, added, FLOW, addedInside, FLOW, settings, FLOW, broken, FLOW])).toEqual(Array(10).fill(false));
  });

  it('leaves an anchor another state may refer to, and an alias, to the whole parse', () => {
    const anchored = replace(FLOW, 'next4: { description: Go on. }', 'next4: { description: &go Go on. }');
    const aliased = replace(anchored, 'next9: { description: Go on. }', 'next9: { description: *go }');
    const changed = replace(aliased, 'next4: { description: &go Go on. }', 'next4: { description: &go Go on now. }');
    expect(analyzeInTurn([FLOW, anchored, aliased, changed])).toEqual([true, false, false]);
  });
});

describe('typing anywhere', () => {
  it('gives what the whole parse gives after each of 150 characters typed or deleted at places spread over the guessing game, and taken back', () => {
    // A fixed sequence (a linear congruential generator), so a failure repeats.
    let seed = 20;
    const random = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % below;
    };
    const typed = 'a0 :{}[],-#\'"\n';
    // Each character typed (or deleted) into the game and taken back again: a keystroke and its undo.
    const base = GUESSING_GAME_YAML;
    const texts = [base];
    for (let i = 0; i < 150; i++) {
      const at = random(base.length);
      texts.push(random(3) === 0 ? base.slice(0, at) + base.slice(at + 1) : base.slice(0, at) + typed[random(typed.length)]! + base.slice(at), base);
    }
    const quick = analyzeInTurn(texts);
    // Many keystrokes inside a state keep the quick way; the rest go to the whole parse.
    expect(quick.filter(Boolean).length).toBeGreaterThan(60);
  });
});

