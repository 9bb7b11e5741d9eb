// What flow tests reach of a flow (docs/testing.md): its states, its transitions — one per tool a
// state lists, a tool without a target being a stay (the graph's self-loop) — and its tools.
// An http tool whose answer may choose the next state (`on_tool_result`, docs/flows.md) has one
// transition per state it may lead to: each listed state, and the state the call leads to when
// the answer names none, names one not listed, or fails (its `on_tool_call` target, else a
// stay). Those are the links the graph draws for it, so a test that only ever gets one answer
// shows the other branches, and the failure path, untested. A transition is (from, tool, to).
// A global tool (settings.global_tools, offered in every state) counts as a tool, once, not as a
// transition of every state: otherwise one "start over" would weigh as much as the whole flow.
// A state's keypad (`dtmf`) has one transition per key and one for its collected number, named
// as the graph names them (`key 1`, `collect account_number`: never a tool's name); they are
// transitions, not tools.
// Pure, so the studio paints what no test reaches from the same lists the API returns.
import { keypadMoves } from './keypad.ts';
import type { FlowDocument, FlowState } from './types.ts';

export interface Transition {
  from: string;
  tool: string;
  /** The state the call leads to; `from` for a tool that keeps the state. */
  to: string;
}

/** What one run (or several, merged) was seen to do. */
export interface Exercised {
  states: string[];
  /** Accepted tool calls and keypad moves: the state they were made in, and the state they led to. */
  transitions: Transition[];
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

/**
 * Every transition the flow has, in document order: each listed tool of each state, once per
 * state it may lead to (the call's target, then the states `on_tool_result` lists for it), then
 * the state's keypad moves.
 */
export function flowTransitions(flow: FlowDocument): Transition[] {
  return Object.entries(flow.states).flatMap(([from, state]) => [
    ...stateToolTransitions(from, state),
    ...keypadMoves(state.dtmf).map(({ via, to }) => ({ from, tool: via, to })),
  ]);
}

function stateToolTransitions(from: string, state: FlowState): Transition[] {
  const out: Transition[] = [];
  for (const tool of new Set(state.agent.tools ?? [])) {
    const onCall = state.transitions?.on_tool_call;
    const onResult = state.transitions?.on_tool_result;
    const choices = onResult && Object.hasOwn(onResult, tool) ? onResult[tool]! : [];
    const targets = new Set([onCall && Object.hasOwn(onCall, tool) ? onCall[tool]! : from, ...choices]);
    for (const to of targets) out.push({ from, tool, to });
  }
  return out;
}

export function transitionKey(t: Transition): string {
  return `${t.from}\u0000${t.tool}\u0000${t.to}`;
}

export function mergeExercised(runs: ReadonlyArray<Exercised>): Exercised {
  const states = new Set<string>();
  const transitions = new Map<string, Transition>();
  for (const run of runs) {
    for (const state of run.states) states.add(state);
    for (const t of run.transitions) transitions.set(transitionKey(t), { from: t.from, tool: t.tool, to: t.to });
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
  const tools = [...new Set([...Object.entries(flow.states).flatMap(([from, state]) => stateToolTransitions(from, state).map((t) => t.tool)), ...Object.keys(flow.settings?.global_tools ?? {})])];
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
