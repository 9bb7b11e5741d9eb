// What the Tests tab and the graph show of simulated callers: per transition, how many of their
// runs took it; per state, how many failed runs ended there (where they got stuck); and a judge's
// verdict as the criterion against its reason.
import { describe, expect, it } from 'vitest';
import { diffOf, simulatedRunsOf, untestedOnGraph } from '../../../../renderer/src/features/tests/test-results.ts';

const run = (passed: boolean, path: string[], transitions: Array<[string, string, string]>, caller = true) => ({
  passed,
  steps: [],
  transcript: [],
  path,
  exercised: { states: path, transitions: transitions.map(([from, tool, to]) => ({ from, tool, to })) },
  duration_ms: 1,
  error: null,
  ...(caller ? { caller: { turns: 2, ended_by: 'flow' as const, reason: null } } : {}),
});

const COVERAGE = {
  states: { covered: ['welcome', 'offer_slot', 'booked'], uncovered: ['ask_day'], fraction: 0.75 },
  transitions: { covered: [], uncovered: [{ from: 'welcome', tool: 'check_availability', to: 'ask_day' }], fraction: 0.5 },
  tools: { covered: [], uncovered: [], fraction: 1 },
};
const LINKS = [
  { id: 'l1', source: 'welcome', tool: 'check_availability', target: 'offer_slot' },
  { id: 'l2', source: 'offer_slot', tool: 'confirm_booking', target: 'booked' },
  { id: 'l3', source: 'welcome', tool: 'check_availability', target: 'ask_day' },
];

describe('simulated runs on the graph', () => {
  it('counts the runs that took each transition (once a run) and where failed runs got stuck; scripted runs do not count', () => {
    const simulated = simulatedRunsOf([
      {
        runs: [
          run(true, ['welcome', 'offer_slot', 'booked'], [['welcome', 'check_availability', 'offer_slot'], ['offer_slot', 'confirm_booking', 'booked']]),
          run(false, ['welcome', 'offer_slot'], [['welcome', 'check_availability', 'offer_slot'], ['welcome', 'check_availability', 'offer_slot']]),
          run(false, ['welcome'], []),
        ],
      },
      { runs: [run(true, ['welcome', 'offer_slot'], [['welcome', 'check_availability', 'offer_slot']], false)] },
    ])!;
    expect(simulated.runs).toBe(3);
    const painted = untestedOnGraph({ ...COVERAGE, simulated }, LINKS);
    expect(painted.simulated).toEqual({ runs: 3, links: new Map([['l1', 2], ['l2', 1]]), stuck: new Map([['offer_slot', 1], ['welcome', 1]]) });
    expect(painted.links).toEqual(new Set(['l3']));
  });

  it('has no counts when no run had a simulated caller', () => {
    expect(simulatedRunsOf([{ runs: [run(true, ['welcome'], [], false)] }])).toBeNull();
    expect(untestedOnGraph(COVERAGE, LINKS).simulated).toBeNull();
  });

  it("shows a judge's verdict as the criterion against its reason", () => {
    expect(diffOf({ check: 'judge', passed: false, expected: 'The caller is booked on a Tuesday', actual: { passed: false, reason: 'No booking.' }, message: 'not met: The caller is booked on a Tuesday — No booking.' })).toEqual({
      check: 'judge',
      expected: 'The caller is booked on a Tuesday',
      actual: 'not met: No booking.',
      message: 'not met: The caller is booked on a Tuesday — No booking.',
    });
  });
});
