// The editor's graph for the extended flow keys, derived from the appointment-booking example:
// result branches of an http tool drawn as links of their own, and the states that speak on
// entering, end the call, cannot be interrupted, or are reached by a global tool, marked.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { deriveGraph } from '../../../../../server/flow/graph/graph.ts';
import { parseFlow } from '../../../../../server/flow/parse.ts';

const BOOKING = readFileSync(new URL('../../../../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8');

describe('the graph of a flow with the extended keys', () => {
  const graph = deriveGraph(parse(BOOKING), parseFlow(BOOKING).diagnostics);
  const card = (name: string) => graph.cards.find((c) => c.name === name)!;

  it('draws each state an http tool\'s answer may choose as a branch link, a move back to its own state as its loop', () => {
    const fromWelcome = graph.links.filter((l) => l.source === 'welcome').map((l) => ({ target: l.target, tool: l.tool, branch: l.branch === true, loop: l.selfLoop }));
    expect(fromWelcome).toEqual([
      { target: 'offer_slot', tool: 'check_availability', branch: true, loop: false },
      { target: 'ask_day', tool: 'check_availability', branch: true, loop: false },
      // A failed check stays: the tool has no call transition.
      { target: 'welcome', tool: 'check_availability', branch: false, loop: true },
    ]);
    const fromAskDay = graph.links.filter((l) => l.source === 'ask_day' && l.branch).map((l) => l.target);
    expect(fromAskDay).toEqual(['offer_slot']);
    expect(new Set(graph.links.map((l) => l.id)).size).toBe(graph.links.length);
  });

  it('bows a branch and a move to the same state apart', () => {
    const twin = BOOKING.replace('        another_day: ask_day\n', '        another_day: ask_day\n      on_tool_result:\n        confirm_booking: [ask_day]\n');
    const links = deriveGraph(parse(twin), []).links.filter((l) => l.source === 'offer_slot' && l.target === 'ask_day');
    expect(links.map((l) => [l.tool, l.branch === true, l.index, l.count])).toEqual([
      ['another_day', false, 0, 2],
      ['confirm_booking', true, 1, 2],
    ]);
  });

  it('marks the on-entry line, the states that end the call, the disclaimer that cannot be cut, and the global tool\'s target', () => {
    expect(card('welcome')).toMatchObject({ says: true, endsCall: false, uninterruptible: true, globalTools: [] });
    expect(card('booked')).toMatchObject({ says: true, endsCall: true, uninterruptible: false, globalTools: [] });
    expect(card('human_handoff')).toMatchObject({ says: true, endsCall: true, globalTools: ['talk_to_human'] });
    expect(card('offer_slot')).toMatchObject({ says: false, endsCall: false, uninterruptible: false, globalTools: [] });
  });

  it('gives back the same objects when nothing changed, and a new card when a mark did', () => {
    const again = deriveGraph(parse(BOOKING), parseFlow(BOOKING).diagnostics, graph);
    expect(again).toBe(graph);
    const edited = deriveGraph(parse(BOOKING.replace('    interruptible: false\n', '')), [], graph);
    expect(edited.cards.find((c) => c.name === 'welcome')).not.toBe(card('welcome'));
    expect(edited.cards.find((c) => c.name === 'welcome')?.uninterruptible).toBe(false);
  });
});
