// The Tests tab paints what no test reaches on the graph: with an http tool's result branches
// each branch is its own link, so the one no test took is painted and the one taken is not.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { deriveGraph } from '../../../../server/flow/graph/graph.ts';
import { untestedOnGraph } from '../../../../renderer/src/features/tests/test-results.ts';
import { parseFlow } from '../../../../server/flow/parse.ts';
import { flowCoverage } from '../../../../server/flow/tests-coverage.ts';

const TEXT = readFileSync(new URL('../../../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8');
const BOOKING = parseFlow(TEXT).document!;

describe('painting untested transitions', () => {
  it('paints the result branch no test took, not the one a test took', () => {
    const graph = deriveGraph(parse(TEXT), []);
    const coverage = flowCoverage(BOOKING, {
      states: ['welcome', 'offer_slot'],
      transitions: [{ from: 'welcome', tool: 'check_availability', to: 'offer_slot' }],
    });
    const painted = untestedOnGraph(coverage, graph.links);
    const link = (source: string, target: string) => graph.links.find((l) => l.source === source && l.target === target && l.tool === 'check_availability')!.id;
    expect(painted.links.has(link('welcome', 'offer_slot'))).toBe(false);
    expect(painted.links.has(link('welcome', 'ask_day'))).toBe(true);
    // The stay of a failed check is a link of its own, also untested.
    expect(painted.links.has(link('welcome', 'welcome'))).toBe(true);
    expect(painted.states.has('offer_slot')).toBe(false);
    expect(painted.states.has('ask_day')).toBe(true);
  });

  it('paints a plain move by its one target, as before', () => {
    const graph = deriveGraph(parse(TEXT), []);
    const coverage = flowCoverage(BOOKING, { states: ['offer_slot', 'booked'], transitions: [{ from: 'offer_slot', tool: 'confirm_booking', to: 'booked' }] });
    const painted = untestedOnGraph(coverage, graph.links);
    const id = (tool: string) => graph.links.find((l) => l.source === 'offer_slot' && l.tool === tool)!.id;
    expect(painted.links.has(id('confirm_booking'))).toBe(false);
    expect(painted.links.has(id('another_day'))).toBe(true);
  });
});
