// What flow tests reach of a flow (DESIGN §14): its states, its transitions — one per tool a
// state lists, a tool without a target being a stay (the graph's self-loop) — and its tools.
// A global tool (settings.global_tools, offered in every state) counts as a tool, once, not as a
// transition of every state: otherwise one "start over" would weigh as much as the whole flow.
// Pure, so the studio paints what no test reaches from the same lists the API returns.
import type { FlowDocument } from './types.ts';

export interface Transition {
  from: string;
  tool: string;
  /** The state the call leads to; `from` for a tool that keeps the state. */
  to: string;
}

/** What one run (or several, merged) was seen to do. */
export interface Exercised {
  states: string[];
  /** Accepted tool calls, as `from` state and tool. */
  transitions: Array<{ from: string; tool: string }>;
}

export interface CoverageFraction<T> {
  covered: T[];
  uncovered: T[];
  /** covered / (covered + uncovered), 1 for an empty flow part. */
  fraction: number;
}

export interface FlowCoverage {
  states: CoverageFraction<string>;
  transitions: CoverageFraction<Transition>;
  tools: CoverageFraction<string>;
}

/** Every transition the flow has: each listed tool of each state, in document order. */
export function flowTransitions(flow: FlowDocument): Transition[] {
  const out: Transition[] = [];
  for (const [from, state] of Object.entries(flow.states)) {
    for (const tool of new Set(state.agent.tools ?? [])) {
      const target = state.transitions?.on_tool_call;
      const to = target && Object.hasOwn(target, tool) ? target[tool]! : from;
      out.push({ from, tool, to });
    }
  }
  return out;
}

export function transitionKey(t: { from: string; tool: string }): string {
  return `${t.from}\u0000${t.tool}`;
}

export function mergeExercised(runs: ReadonlyArray<Exercised>): Exercised {
  const states = new Set<string>();
  const transitions = new Map<string, { from: string; tool: string }>();
  for (const run of runs) {
    for (const state of run.states) states.add(state);
    for (const t of run.transitions) transitions.set(transitionKey(t), { from: t.from, tool: t.tool });
  }
  return { states: [...states], transitions: [...transitions.values()] };
}

function fraction<T>(covered: T[], uncovered: T[]): CoverageFraction<T> {
  const total = covered.length + uncovered.length;
  return { covered, uncovered, fraction: total === 0 ? 1 : covered.length / total };
}

/** The flow's parts split into reached and not reached, in the flow's own order. */
export function flowCoverage(flow: FlowDocument, exercised: Exercised): FlowCoverage {
  const seenStates = new Set(exercised.states);
  const seenTransitions = new Set(exercised.transitions.map(transitionKey));
  const states = Object.keys(flow.states);
  const transitions = flowTransitions(flow);
  const tools = [...new Set([...transitions.map((t) => t.tool), ...Object.keys(flow.settings?.global_tools ?? {})])];
  const seenTools = new Set(exercised.transitions.map((t) => t.tool));
  return {
    states: fraction(
      states.filter((s) => seenStates.has(s)),
      states.filter((s) => !seenStates.has(s)),
    ),
    transitions: fraction(
      transitions.filter((t) => seenTransitions.has(transitionKey(t))),
      transitions.filter((t) => !seenTransitions.has(transitionKey(t))),
    ),
    tools: fraction(
      tools.filter((t) => seenTools.has(t)),
      tools.filter((t) => !seenTools.has(t)),
    ),
  };
}

/** "7/7 states, 6/7 transitions, 5/5 tools" */
export function describeCoverage(coverage: FlowCoverage): string {
  const part = (c: CoverageFraction<unknown>, what: string) => `${c.covered.length}/${c.covered.length + c.uncovered.length} ${what}`;
  return `${part(coverage.states, 'states')}, ${part(coverage.transitions, 'transitions')}, ${part(coverage.tools, 'tools')}`;
}
