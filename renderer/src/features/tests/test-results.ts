// What the Tests tab shows of a run, as plain functions of the API's answer (unit-tested without
// a browser): each failed check as expected against actual, and the coverage as the graph's
// states and link ids no test reaches.
import { transitionKey, type FlowCoverage } from '../../../../server/flow/tests-coverage.ts';
import type { TestCheckView } from '../../lib/api-types.ts';

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
  return { check: check.check.replace('_', ' '), expected: showValue(check.expected), actual: showValue(check.actual), message: check.message };
}

/** The states and transitions (as the graph's link ids) no test reaches. */
export function untestedOnGraph(
  coverage: FlowCoverage,
  links: ReadonlyArray<{ id: string; source: string; tool: string; target: string }>,
): { states: Set<string>; links: Set<string> } {
  // A link is one (from, tool, to): a move, a stay's self-loop (to = from), or one of an http
  // tool's result branches, so each branch is painted on its own.
  const missing = new Set(coverage.transitions.uncovered.map(transitionKey));
  return {
    states: new Set(coverage.states.uncovered),
    links: new Set(links.filter((l) => missing.has(transitionKey({ from: l.source, tool: l.tool, to: l.target }))).map((l) => l.id)),
  };
}

export const percent = (fraction: number) => `${Math.round(fraction * 100)}%`;
