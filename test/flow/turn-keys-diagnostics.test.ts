import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { FlowRuntime } from '../../server/flow/runtime.ts';
import { editExtended } from './extended-diagnostic-cases.ts';

// The `turn` key (docs/flows.md#turn-taking), on a state and under settings, in the flow that uses
// every extended key: with the `turn` of settings on line 11, the greet state's `turn` is on line 25.
const withTurn = (stateTurn: string, settingsTurn = '  turn: { backchannels: ignore, max_endpointing_ms: 1500 }') =>
  editExtended('  recording: true\n', `  recording: true\n${settingsTurn}\n`).replace('    endpointing_ms: 700\n', `    endpointing_ms: 700\n${stateTurn}\n`);

describe('the turn key', () => {
  it('is accepted on a state and under settings, and the state\'s keys win over the flow\'s', () => {
    const parsed = parseFlow(withTurn('    turn:\n      min_interruption_words: 2\n      backchannels: interrupt\n      endpointing_ms: 600'));
    expect(parsed.diagnostics).toEqual([]);
    const runtime = new FlowRuntime(parsed.document!);
    expect(runtime.turnOptions()).toMatchObject({ minInterruptionWords: 2, backchannels: 'interrupt', endpointingMs: 600, maxEndpointingMs: 1500 });
    // The state's tools take an enum of days: those are short answers.
    expect(runtime.turnOptions().hints.enumValues).toEqual(['monday', 'tuesday']);
  });

  it('falls back to the state\'s endpointing_ms, then sets nothing the flow does not', () => {
    const parsed = parseFlow(withTurn('    turn: {}', '  turn: {}'));
    expect(parsed.diagnostics).toEqual([]);
    expect(new FlowRuntime(parsed.document!).turnOptions()).toEqual({
      endpointingMs: 700,
      hints: { yesNo: false, enumValues: ['monday', 'tuesday'], number: false, collectingDigits: false },
    });
  });

  it.each([
    { turn: '    turn: { backchannels: never }', code: 'invalid_value', line: 25, column: 27, path: ['states', 'greet', 'turn', 'backchannels'], mentions: 'ignore, interrupt' },
    { turn: '    turn: { min_interruption_words: 11 }', code: 'out_of_range', line: 25, column: 37, path: ['states', 'greet', 'turn', 'min_interruption_words'], mentions: '10' },
    { turn: '    turn: { min_interruption_words: 1.5 }', code: 'wrong_type', line: 25, column: 37, path: ['states', 'greet', 'turn', 'min_interruption_words'], mentions: 'whole' },
    { turn: '    turn: { endpointing_ms: 50 }', code: 'out_of_range', line: 25, column: 29, path: ['states', 'greet', 'turn', 'endpointing_ms'], mentions: '100' },
    { turn: '    turn: { endpointng_ms: 500 }', code: 'unknown_key', line: 25, column: 13, path: ['states', 'greet', 'turn', 'endpointng_ms'], mentions: 'did you mean "endpointing_ms"' },
    { turn: '    turn: { endpointing_ms: 900, max_endpointing_ms: 600 }', code: 'turn_wait_below_base', line: 25, column: 54, path: ['states', 'greet', 'turn', 'max_endpointing_ms'], mentions: 'below endpointing_ms' },
    { turn: '    turn: ignore', code: 'wrong_type', line: 25, column: 11, path: ['states', 'greet', 'turn'], mentions: 'must be a map' },
  ])('reports $code at line $line, column $column for "$turn"', (c) => {
    const parsed = parseFlow(withTurn(c.turn));
    const found = parsed.diagnostics.find((d) => d.code === c.code);
    expect(found, JSON.stringify(parsed.diagnostics, null, 1)).toMatchObject({ severity: 'error', line: c.line, column: c.column, path: c.path });
    expect(found!.message).toContain(c.mentions);
    expect(parsed.document).toBeNull();
  });

  it('checks settings.turn the same way', () => {
    const parsed = parseFlow(withTurn('    turn: {}', '  turn: { endpointing_ms: 800, max_endpointing_ms: 700 }'));
    expect(parsed.diagnostics).toMatchObject([{ code: 'turn_wait_below_base', line: 11, column: 52, path: ['settings', 'turn', 'max_endpointing_ms'] }]);
  });
});
