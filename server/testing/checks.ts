// A step's expectations against the events of the step — one code for every way of running, so a
// test means the same thing typed, played by a model, or spoken.
import { expectedCalls, matchesPattern, sameValue, type StepExpectation, type TestStep, type ToolCallExpectation } from '../flow/tests-format.ts';
import type { Exercised } from '../flow/tests-coverage.ts';
import type { ServerEvent, ServerEventOf } from '../protocol/events.ts';
import type { CheckResult, StepResult, ToolCallSeen, TranscriptLine } from './results.ts';

/** What the session showed when the step was over, beyond its own events. */
export interface StepEnd {
  /** The system prompt the model would be given now. */
  prompt: string;
  /** Why the runner stopped waiting, when it was not because the agent was done. */
  unfinished: string | null;
}

type ToolCallEvent = ServerEventOf<'tool_call'>;

export function describeAction(step: TestStep): string {
  if (step.user !== undefined) return `user: ${step.user}`;
  if (step.simulate) return `simulate: ${step.simulate.tool}`;
  if (step.dtmf !== undefined) return `dtmf: ${step.dtmf}`;
  return 'check';
}

export function transcriptOf(events: readonly ServerEvent[]): TranscriptLine[] {
  return events.flatMap((e) =>
    e.type === 'transcript' && e.final ? [{ role: e.role, text: e.text, ...(e.interrupted ? { interrupted: true } : {}) }] : [],
  );
}

/**
 * The step's calls. An http tool's call is shown with its answer and the state the answer led to
 * (paired as `exercisedBy` pairs them), not the stay its tool_call event says while it waits.
 */
export function toolCallsOf(events: readonly ServerEvent[]): ToolCallSeen[] {
  const calls: ToolCallSeen[] = [];
  for (const e of events) {
    if (e.type === 'tool_call') {
      calls.push({ name: e.name, arguments: e.arguments, status: e.status, reason: e.reason, ...(e.code ? { code: e.code } : {}), source: e.source, from_state: e.from_state, to_state: e.to_state });
    } else if (e.type === 'tool_result') {
      const call = calls.find((c) => c.status === 'accepted' && !c.answer && c.name === e.name && c.from_state === e.from_state && c.to_state === e.from_state);
      if (!call) continue;
      call.to_state = e.to_state;
      call.answer = { ok: e.ok, http_status: e.http_status, error: e.error };
    }
  }
  return calls;
}

function last<T extends ServerEvent['type']>(events: readonly ServerEvent[], type: T): ServerEventOf<T> | undefined {
  for (let i = events.length - 1; i >= 0; i--) if (events[i]!.type === type) return events[i] as ServerEventOf<T>;
  return undefined;
}

/** The path of states as the flow_state events show it (repeats of the same state dropped). */
export function pathOf(events: readonly ServerEvent[], startState: string | null = null): string[] {
  const path: string[] = [];
  let current = startState;
  for (const e of events) {
    if (e.type !== 'flow_state' || e.state === current) continue;
    path.push(e.state);
    current = e.state;
  }
  return path;
}

/**
 * States entered, and accepted calls and keypad moves, each with the state it led to, for
 * coverage (a keypad move is named as the graph names it: `key 1`, `collect account_number`). An http tool's
 * call moves nothing itself (its tool_call event stays); its tool_result event, later, says where
 * the answer led. So a result is paired with the earliest call of that tool, from that state,
 * that stayed and is not yet paired; a result that came after the session moved on (from another
 * state) led that call nowhere, and it counts as the stay it was.
 */
export function exercisedBy(events: readonly ServerEvent[]): Exercised {
  const calls: Array<{ from: string; tool: string; to: string; waiting: boolean }> = [];
  for (const e of events) {
    if (e.type === 'tool_call' && e.status === 'accepted') {
      calls.push({ from: e.from_state, tool: e.name, to: e.to_state, waiting: e.from_state === e.to_state });
    } else if (e.type === 'tool_result') {
      const call = calls.find((c) => c.waiting && c.tool === e.name && c.from === e.from_state);
      if (!call) continue;
      call.waiting = false;
      call.to = e.to_state;
    } else if (e.type === 'dtmf') {
      for (const move of e.moves) calls.push({ from: move.from_state, tool: move.via, to: move.to_state, waiting: false });
    }
  }
  return {
    states: [...new Set(events.flatMap((e) => (e.type === 'flow_state' ? [e.state] : [])))],
    transitions: calls.map(({ from, tool, to }) => ({ from, tool, to })),
  };
}

function argumentsMatch(expected: ToolCallExpectation['arguments'], actual: unknown): boolean {
  if (!expected) return true;
  const given = typeof actual === 'object' && actual !== null ? (actual as Record<string, unknown>) : {};
  return Object.entries(expected).every(([name, value]) => sameValue(value, Object.hasOwn(given, name) ? given[name] : undefined));
}

function describeCall(call: { name: string; arguments?: unknown }): string {
  const args = call.arguments && typeof call.arguments === 'object' && Object.keys(call.arguments).length > 0 ? JSON.stringify(call.arguments) : '';
  return `${call.name}(${args})`;
}

function checkToolCalls(expected: ToolCallExpectation[], calls: ToolCallSeen[]): CheckResult {
  const accepted = calls.filter((c) => c.status === 'accepted');
  let from = 0;
  const missing: ToolCallExpectation[] = [];
  for (const want of expected) {
    const found = accepted.findIndex((c, i) => i >= from && c.name === want.name && argumentsMatch(want.arguments, c.arguments));
    if (found < 0) missing.push(want);
    else from = found + 1;
  }
  const actual = accepted.map((c) => ({ name: c.name, arguments: c.arguments }));
  const rejected = calls.filter((c) => c.status === 'rejected');
  const seen = actual.length ? actual.map(describeCall).join(', ') : 'no accepted call';
  const why = rejected.length ? `; rejected: ${rejected.map((c) => `${c.name} (${c.reason ?? 'rejected'})`).join(', ')}` : '';
  return {
    check: 'tool_called',
    passed: missing.length === 0,
    expected,
    actual,
    message: missing.length === 0 ? `called ${expected.map(describeCall).join(', ')}` : `expected ${missing.map(describeCall).join(', ')} to be called; saw ${seen}${why}`,
  };
}

function textCheck(check: 'says' | 'not_says' | 'card' | 'prompt', pattern: string, actual: string, negate = false): CheckResult {
  const matched = matchesPattern(pattern, actual);
  const passed = negate ? !matched : matched;
  const what = check === 'card' ? 'the card' : check === 'prompt' ? 'the prompt' : 'the agent';
  return {
    check,
    passed,
    expected: pattern,
    actual,
    message: passed
      ? `${what} ${negate ? 'did not say' : 'matched'} ${pattern}`
      : negate
        ? `${what} said ${pattern}: "${actual}"`
        : `${what} did not match ${pattern}: "${actual}"`,
  };
}

/** The call was handed to `to` during the step: a transfer to it started (or completed) and did not fail. */
function checkTransfer(to: string, stepEvents: readonly ServerEvent[]): CheckResult {
  const transfers = stepEvents.filter((e): e is ServerEventOf<'transfer'> => e.type === 'transfer');
  const toTarget = transfers.filter((e) => e.to === to);
  const failed = toTarget.find((e) => e.status === 'failed');
  const passed = toTarget.length > 0 && !failed;
  const seen = [...new Set(transfers.map((e) => `${e.to} (${e.status}${e.reason ? `: ${e.reason}` : ''})`))];
  return {
    check: 'transferred_to',
    passed,
    expected: to,
    actual: transfers.map((e) => ({ to: e.to, mode: e.mode, status: e.status, ...(e.reason ? { reason: e.reason } : {}) })),
    message: passed
      ? `transferred to ${to}`
      : failed
        ? `the transfer to ${to} failed${failed.reason ? `: ${failed.reason}` : ''}`
        : `expected a transfer to ${to}; saw ${seen.length > 0 ? seen.join(', ') : 'no transfer'}`,
  };
}

/**
 * Checks one step: `stepEvents` are the events from the step's action to its end, `allEvents`
 * every event so far (the state and the card are what they are at the end, whenever they were set).
 */
export function checkStep(index: number, step: TestStep, stepEvents: readonly ServerEvent[], allEvents: readonly ServerEvent[], end: StepEnd): StepResult {
  const expect: StepExpectation = step.expect ?? {};
  const checks: CheckResult[] = [];
  const flowState = last(allEvents, 'flow_state');
  const state = flowState?.state ?? '';
  const calls = toolCallsOf(stepEvents);
  const transcript = transcriptOf(stepEvents);
  const agentSaid = transcript.filter((l) => l.role === 'agent').map((l) => l.text).join(' ');

  if (end.unfinished) checks.push({ check: 'finished', passed: false, expected: 'the agent done', actual: end.unfinished, message: end.unfinished });
  const errors = stepEvents.filter((e): e is ServerEventOf<'error'> => e.type === 'error');
  if (errors.length > 0) {
    checks.push({
      check: 'errors',
      passed: false,
      expected: [],
      actual: errors.map((e) => ({ code: e.code, message: e.message })),
      message: `the session reported ${errors.map((e) => `${e.code} (${e.message})`).join('; ')}`,
    });
  }
  const calledList = expectedCalls(expect);
  if (calledList.length > 0) checks.push(checkToolCalls(calledList, calls));
  if (expect.state !== undefined) {
    checks.push({ check: 'state', passed: state === expect.state, expected: expect.state, actual: state, message: state === expect.state ? `in ${state}` : `expected state ${expect.state}, but the session is in ${state}` });
  }
  if (expect.variables) {
    const actual = flowState?.variables ?? {};
    const wrong = Object.entries(expect.variables).filter(([name, value]) => !sameValue(value, Object.hasOwn(actual, name) ? actual[name] : undefined));
    checks.push({
      check: 'variables',
      passed: wrong.length === 0,
      expected: expect.variables,
      actual,
      message: wrong.length === 0 ? 'variables as expected' : wrong.map(([name, value]) => `${name}: expected ${JSON.stringify(value)}, got ${JSON.stringify(actual[name] ?? null)}`).join('; '),
    });
  }
  if (expect.says !== undefined) checks.push(textCheck('says', expect.says, agentSaid));
  if (expect.not_says !== undefined) checks.push(textCheck('not_says', expect.not_says, agentSaid, true));
  if (expect.card !== undefined) checks.push(textCheck('card', expect.card, last(allEvents, 'artifact')?.prompt ?? ''));
  if (expect.prompt !== undefined) checks.push(textCheck('prompt', expect.prompt, end.prompt));
  if (expect.interrupted !== undefined) {
    const interrupted = stepEvents.some((e) => e.type === 'interrupted');
    checks.push({
      check: 'interrupted',
      passed: interrupted === expect.interrupted,
      expected: expect.interrupted,
      actual: interrupted,
      message: interrupted === expect.interrupted ? (interrupted ? 'the agent was cut off' : 'the agent was not cut off') : interrupted ? 'the agent was cut off' : 'the agent was not cut off (it had finished, or never spoke)',
    });
  }
  if (expect.ended !== undefined) {
    const ended = stepEvents.find((e): e is ServerEventOf<'session_ended'> => e.type === 'session_ended');
    checks.push({
      check: 'ended',
      passed: (ended !== undefined) === expect.ended,
      expected: expect.ended,
      actual: ended ? ended.reason : false,
      message: ended ? `the session ended (${ended.reason})` : 'the session went on',
    });
  }
  if (expect.transferred_to !== undefined) checks.push(checkTransfer(expect.transferred_to, stepEvents));
  const before = allEvents.slice(0, allEvents.length - stepEvents.length);
  return {
    index,
    action: describeAction(step),
    passed: checks.every((c) => c.passed),
    checks,
    transcript,
    tool_calls: calls,
    path: pathOf(stepEvents, last(before, 'flow_state')?.state ?? null),
    state,
  };
}

/** An event of the step as the runner saw it: on the run's clock, and in real time. */
export interface TimedEvent {
  at: number;
  wall: number;
  event: ServerEvent;
}

/**
 * A step's `within_ms`: how long the agent took to answer the step's action. Spoken (audio runs),
 * from the end of the caller's turn (the voice activity model's user_stopped_speaking) to the
 * agent's first audio (agent_started_speaking), on the run's clock; typed, from the turn sent to
 * the agent's first words or speech, in real time (the model's own time: a typed run's clock
 * moves only while the agent speaks).
 */
export function checkBudget(budgetMs: number, stepEvents: readonly TimedEvent[], actedAtWall: number, spoken: boolean): CheckResult {
  const isAnswer = (e: ServerEvent) => e.type === 'agent_started_speaking' || (e.type === 'transcript' && e.role === 'agent');
  let tookMs: number | null = null;
  let what = 'its first words';
  if (spoken) {
    what = 'its first audio';
    const turnEnd = stepEvents.find((e) => e.event.type === 'user_stopped_speaking');
    const answer = turnEnd ? stepEvents.find((e) => e.at >= turnEnd.at && e.event.type === 'agent_started_speaking') : undefined;
    if (turnEnd && answer) tookMs = answer.at - turnEnd.at;
  } else {
    const answer = stepEvents.find((e) => isAnswer(e.event));
    if (answer) tookMs = answer.wall - actedAtWall;
  }
  const from = spoken ? "the end of the caller's turn" : "the caller's turn";
  if (tookMs === null) {
    return { check: 'within_ms', passed: false, expected: budgetMs, actual: null, message: `the agent never answered (budget ${budgetMs} ms)` };
  }
  const took = Math.round(tookMs);
  const passed = took <= budgetMs;
  return {
    check: 'within_ms',
    passed,
    expected: budgetMs,
    actual: took,
    message: passed ? `the agent answered in ${took} ms (budget ${budgetMs} ms)` : `the agent took ${took} ms from ${from} to ${what}, over its budget of ${budgetMs} ms`,
  };
}
