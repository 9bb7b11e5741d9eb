// The editor's graph of a phone menu: each key of a state's keypad, and its collected number, is
// a link labelled as coverage names it, so the studio can paint the keys no flow test presses;
// renaming or deleting a state keeps the keys that lead there pointing right.
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { deriveGraph } from '../../../../../server/flow/graph/graph.ts';
import { deleteState, renameState } from '../../../../../renderer/src/features/editor/document/operations.ts';
import { untestedOnGraph } from '../../../../../renderer/src/features/tests/test-results.ts';
import { parseFlow } from '../../../../../server/flow/parse.ts';
import { flowCoverage } from '../../../../../server/flow/tests-coverage.ts';
import { PHONE_VALID } from '../../../../flow/phone-diagnostic-cases.ts';

describe('the graph of a flow with a keypad', () => {
  const graph = deriveGraph(parse(PHONE_VALID), parseFlow(PHONE_VALID).diagnostics);

  it('draws a link per key and one for the collected number, a key back to its own state as a loop', () => {
    const fromMenu = graph.links.filter((l) => l.source === 'menu').map((l) => [l.tool, l.target, l.selfLoop, l.index, l.count]);
    expect(fromMenu).toEqual([
      ['key 0', 'human', false, 0, 1],
      // Two keys to one state bow apart.
      ['key 1', 'book', false, 0, 2],
      ['key #', 'book', false, 1, 2],
      ['collect account_number', 'verify', false, 0, 1],
      ['key *', 'menu', true, 0, 1],
    ]);
    expect(new Set(graph.links.map((l) => l.id)).size).toBe(graph.links.length);
  });

  it('draws no link for a key to a state that does not exist, nor for an unfinished collect', () => {
    const broken = PHONE_VALID.replace('"1": book', '"1": nowhere').replace('then: verify', 'then: 7');
    const tools = deriveGraph(parse(broken), []).links.filter((l) => l.source === 'menu').map((l) => l.tool);
    expect(tools).toEqual(['key 0', 'key #', 'key *']);
  });

  it('paints the keys no flow test pressed as untested', () => {
    const coverage = flowCoverage(parseFlow(PHONE_VALID).document!, { states: ['menu', 'human'], transitions: [{ from: 'menu', tool: 'key 0', to: 'human' }] });
    const untested = untestedOnGraph(coverage, graph.links);
    const menuLinks = graph.links.filter((l) => l.source === 'menu');
    expect(menuLinks.filter((l) => untested.links.has(l.id)).map((l) => l.tool)).toEqual(['key 1', 'key #', 'collect account_number', 'key *']);
  });
});

describe('renaming and deleting a state a phone key leads to', () => {
  it('renames the keys, the collected number and the failed transfer that lead there', () => {
    const renamed = renameState(parse(PHONE_VALID), 'menu', 'main_menu');
    const result = parseFlow(stringify(renamed));
    expect(result.diagnostics).toEqual([]);
    expect(result.document?.states.main_menu?.dtmf?.keys?.['*']).toBe('main_menu');
    expect(result.document?.states.human?.on_enter?.transfer?.on_failed).toBe('main_menu');
    const verify = parseFlow(stringify(renameState(parse(PHONE_VALID), 'verify', 'check')));
    expect(verify.document?.states.menu?.dtmf?.collect?.then).toBe('check');
  });

  it('removes the keys into a deleted state, and a failed transfer to it', () => {
    const deleted = deleteState(parse(PHONE_VALID), 'book');
    expect(deleted.states).toMatchObject({ menu: { dtmf: { keys: { '0': 'human', '*': 'menu' } } } });
    expect(Object.keys((deleted.states as Record<string, { dtmf: { keys: object } }>).menu!.dtmf.keys)).toEqual(['0', '*']);
    const withoutMenu = deleteState(parse(PHONE_VALID), 'menu');
    expect((withoutMenu.states as Record<string, { on_enter: object }>).human!.on_enter).toEqual({ say: 'Connecting you to the front desk.', transfer: { to: '+15551234567', mode: 'warm', summary: true } });
  });
});
