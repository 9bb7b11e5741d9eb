// What the Tests tab shows of a run, as plain functions of the API's answer (unit-tested without
// a browser): each failed check as expected against actual, and the coverage as the graph's
// states and link ids no test reaches.
import { transitionKey, type FlowCoverage } from '../../../../server/flow/tests-coverage.ts';
import type { TestCheckView, TestResultView } from '../../lib/api-types.ts';

/** A value as a designer reads it: text plain, anything else as compact JSON. */
export function showValue(value: unknown): string {
  if (typeof value === 'string') return value === '' ? '(nothing)' : value;
  if (value === undefined || value === null) return '(nothing)';
  return JSON.stringify(value);
}

export interface CheckDiff {
  check: string;
  expected: string;
  actual: string;
  message: string;
}

export function diffOf(check: TestCheckView): CheckDiff {
  // A judge's verdict reads as the criterion against its reason (or why it is unknown).
  if (check.check === 'judge') return { check: 'judge', expected: showValue(check.expected), actual: check.message.replace(/^(not met|met): .* — /, '$1: '), message: check.message };
  return { check: check.check.replace('_', ' '), expected: showValue(check.expected), actual: showValue(check.actual), message: check.message };
}

/**
 * What the simulated callers of a run did on the flow: how many of their runs took each
 * transition, and in which state each failed run was when its call ended (where it got stuck).
 */
export interface SimulatedRuns {
  runs: number;
  transitions: Array<{ from: string; tool: string; to: string; runs: number }>;
  stuck: Array<{ state: string; runs: number }>;
}

/** The coverage the graph paints, with the simulated callers' counts when the run had any. */
export type PaintedCoverage = FlowCoverage & { simulated?: SimulatedRuns | null };

export function simulatedRunsOf(tests: ReadonlyArray<Pick<TestResultView, 'runs'>>): SimulatedRuns | null {
  const runs = tests.flatMap((t) => t.runs).filter((r) => r.caller !== undefined);
  if (runs.length === 0) return null;
  const taken = new Map<string, { from: string; tool: string; to: string; runs: number }>();
  const stuck = new Map<string, number>();
  for (const run of runs) {
    // A run counts once per transition, however often it took it.
    for (const t of new Map(run.exercised.transitions.map((t) => [transitionKey(t), t])).values()) {
      const key = transitionKey(t);
      taken.set(key, { ...t, runs: (taken.get(key)?.runs ?? 0) + 1 });
    }
    const last = run.path.at(-1);
    if (!run.passed && last !== undefined) stuck.set(last, (stuck.get(last) ?? 0) + 1);
  }
  return { runs: runs.length, transitions: [...taken.values()], stuck: [...stuck].map(([state, n]) => ({ state, runs: n })) };
}

/** The states and transitions (as the graph's link ids) no test reaches, and what simulated runs did there. */
export function untestedOnGraph(
  coverage: PaintedCoverage,
  links: ReadonlyArray<{ id: string; source: string; tool: string; target: string }>,
): { states: Set<string>; links: Set<string>; simulated: { runs: number; links: Map<string, number>; stuck: Map<string, number> } | null } {
  // A link is one (from, tool, to): a move, a stay's self-loop (to = from), or one of an http
  // tool's result branches, so each branch is painted on its own.
  const missing = new Set(coverage.transitions.uncovered.map(transitionKey));
  const sim = coverage.simulated;
  const takenBy = new Map((sim?.transitions ?? []).map((t) => [transitionKey(t), t.runs]));
  return {
    states: new Set(coverage.states.uncovered),
    links: new Set(links.filter((l) => missing.has(transitionKey({ from: l.source, tool: l.tool, to: l.target }))).map((l) => l.id)),
    simulated: sim
      ? {
          runs: sim.runs,
          links: new Map(links.flatMap((l) => { const n = takenBy.get(transitionKey({ from: l.source, tool: l.tool, to: l.target })); return n ? [[l.id, n] as const] : []; })),
          stuck: new Map(sim.stuck.map((s) => [s.state, s.runs])),
        }
      : null,
  };
}

export const percent = (fraction: number) => `${Math.round(fraction * 100)}%`;

/**
 * A test's adherence figure as one line (docs/api.md#the-adherence-figure): what the model tried
 * over all its runs and what the flow refused. Null when the script made the calls (scripted mode).
 */
export function adherenceLine(adherence: TestResultView['adherence']): string | null {
  if (!adherence) return null;
  const refused = adherence.rejected_off_state + adherence.rejected_arguments + adherence.rejected_other;
  const calls = `${adherence.tool_calls} tool call${adherence.tool_calls === 1 ? '' : 's'} by the model, ${adherence.moves} move${adherence.moves === 1 ? '' : 's'}`;
  if (refused === 0) return `${calls}; none refused`;
  const parts = [
    adherence.rejected_off_state ? `${adherence.rejected_off_state} not offered by the state` : '',
    adherence.rejected_arguments ? `${adherence.rejected_arguments} with arguments that did not fit` : '',
    adherence.rejected_other ? `${adherence.rejected_other} other` : '',
  ].filter(Boolean);
  return `${calls}; refused: ${parts.join(', ')}`;
}
