// The flow-test format (docs/testing.md): YAML that says what a user does and what the flow must do in
// answer, parsed like a flow document — every problem at once, each with a path, a line and a
// column — so the studio lints tests with the same code the API and the CLI refuse them with.
// A little over 400 lines, one idea: the format's every key, checked in one pass with its position.
//
// A file holds one test (`name`, `context`, `steps`) or a suite (`flow`, `tests: [...]`); the API
// stores one test per resource and imports/exports suites. A step does one thing — `user` (a turn
// the user says or types), `simulate` (a tool call made by hand, no model), `dtmf` (keys the caller
// presses) or nothing (only checks, e.g. of the greeting) — and `expect`s what the user would
// notice by the end of it. Where no
// model plays the agent (scripted and audio modes), the agent makes the calls `tool_called` names
// and says the step's `reply`; in model mode the configured model must find them itself.
//
// Text expectations (`says`, `not_says`, `card`, `prompt`) are written `/regex/flags` or as plain
// text, which matches case-insensitively anywhere (what a designer means by "it says thanks").
// Values (`variables`, tool `arguments`) compare as text: YAML's `1` and the model's "1" are equal.
//
// Pure TypeScript: the studio bundles this folder, so no Node APIs here.
// Over 400 lines: one strict reader for the whole test format (scripted steps, simulated callers,
// judges, budgets), so every key is checked with its line and column in one place.
import { LineCounter, isMap, isSeq } from 'yaml';
import { z } from 'zod';
import { DocumentLocator } from './locate.ts';
import { parseYaml } from './parse-yaml.ts';
import { dataTooDeep, isStackOverflowError, tooDeepMessage, tooDeeplyNested } from './nesting.ts';
import { describePath, describeValue } from './structure.ts';
import { KEYPAD_RUN_PATTERN } from './keypad.ts';
import { transferTargetProblem } from './semantics-phone.ts';
import { ToolAnswer, ToolAnswers, checkToolAnswers } from './tests-tool-answers.ts';
import { patternProblem } from './tests-patterns.ts';
import { Judge, MAX_TEST_RUNS, MAX_WITHIN_MS, ModelName, SimulatedCaller } from './tests-caller.ts';
import { MAX_DOCUMENT_BYTES, MAX_YAML_ALIASES, type DocPath, type FlowDocument, type Severity } from './types.ts';

/** Every code a test document can be diagnosed with, and its severity. */
export const TEST_DIAGNOSTIC_CODES = {
  document_too_large: 'error',
  yaml_syntax: 'error',
  too_many_aliases: 'error',
  too_deeply_nested: 'error',
  missing_key: 'error',
  unknown_key: 'error',
  wrong_type: 'error',
  invalid_pattern: 'error',
  two_actions: 'error',
  nothing_to_check: 'error',
  conflicting_answer: 'error',
  /** A test has scripted steps or a simulated caller: both, neither, or a caller's keys beside steps. */
  caller_or_steps: 'error',
  invalid_transfer_target: 'error',
  // A test may be written before the state or tool it names exists in the flow.
  unknown_state: 'warning',
  unknown_tool: 'warning',
  unknown_transfer_target: 'warning',
  // An http tool's answer (tool_results) that nothing in the step or the flow would use.
  unused_answer: 'warning',
} as const satisfies Record<string, Severity>;
export type TestDiagnosticCode = keyof typeof TEST_DIAGNOSTIC_CODES;

export { matchesPattern, sameValue } from './tests-patterns.ts';

export interface TestDiagnostic {
  severity: Severity;
  code: TestDiagnosticCode;
  message: string;
  path: Array<string | number>;
  line: number;
  column: number;
}

/** The longest a barge-in may wait: a reply longer than a minute is not a voice reply. */
export const MAX_BARGE_IN_MS = 60_000;

const Text = z.string();
const Value = z.union([z.string(), z.number(), z.boolean()]);

const ToolCallExpectation = z.strictObject({
  name: z.string(),
  /** Only the arguments named here are checked; others the model adds are fine. */
  arguments: z.record(z.string(), Value).optional(),
});
export type ToolCallExpectation = z.infer<typeof ToolCallExpectation>;

export const StepExpectation = z.strictObject({
  /** The state the session is in when the step is over. */
  state: z.string().optional(),
  /** Accepted calls made during the step, in this order (others may come in between). */
  tool_called: z.union([ToolCallExpectation, z.array(ToolCallExpectation)]).optional(),
  /** Variables the session holds when the step is over (only these are checked). */
  variables: z.record(z.string(), Value).optional(),
  /** What the agent said during the step (its words and speech cues). */
  says: Text.optional(),
  not_says: Text.optional(),
  /** The card the user sees when the step is over (the state's rendered ui.prompt). */
  card: Text.optional(),
  /** The system prompt the model was given last in the step (base + state prompt, rendered). */
  prompt: Text.optional(),
  /** Whether the agent was cut off during the step. */
  interrupted: z.boolean().optional(),
  /** Whether the session ended during the step (a state's `on_enter: end_session`). */
  ended: z.boolean().optional(),
  /** The number or SIP address the call was handed to during the step (`on_enter.transfer`), and the transfer did not fail. */
  transferred_to: z.string().optional(),
});
export type StepExpectation = z.infer<typeof StepExpectation>;

export const TestStep = z.strictObject({
  user: z.string().optional(),
  simulate: z.strictObject({ tool: z.string(), arguments: z.record(z.string(), Value).optional() }).optional(),
  /** Keys the caller presses on the phone's keypad, one after the other, e.g. "1234#". */
  dtmf: z.string().regex(KEYPAD_RUN_PATTERN, 'must be 1 to 32 of the keypad keys 0-9, * and #').optional(),
  /**
   * Do this step this long after the agent began to speak its previous reply, cutting it off,
   * instead of after it has finished (the default).
   */
  barge_in_after_ms: z.number().int().min(0).max(MAX_BARGE_IN_MS).optional(),
  /**
   * The agent's budget for answering this step's action: its first words (typed runs) or its
   * first audio (audio runs) within this many milliseconds of the caller's turn ending.
   */
  within_ms: z.number().int().min(1).max(MAX_WITHIN_MS).optional(),
  /**
   * What the agent answers in words after the step's tool calls when no model plays it (scripted
   * and audio modes): the script of the agent, as `tool_called` is the script of its calls. A
   * model speaks for itself and ignores it.
   */
  reply: z.string().optional(),
  /** What the account's service answers the flow's http tools called during the step (tests-tool-answers.ts). */
  tool_results: ToolAnswers.optional(),
  expect: StepExpectation.optional(),
});
export type TestStep = z.infer<typeof TestStep>;

export const FlowTest = z.strictObject({
  name: z.string().min(1),
  description: z.string().optional(),
  /** The session's start context: pre-fills variables. */
  context: z.record(z.string(), z.unknown()).optional(),
  /** Scripted steps; or, instead, a simulated caller (tests-caller.ts). */
  steps: z.array(TestStep).min(1).optional(),
  caller: SimulatedCaller.optional(),
  /** The model that plays the caller (the configured provider's), when not the configured one. */
  caller_llm: ModelName.optional(),
  /** A model that decides whether the call met each criterion. */
  judge: Judge.optional(),
  /** With a caller: what the flow's http tools are answered during the whole call. */
  tool_results: ToolAnswers.optional(),
  /** With a caller: what must hold over the whole call (its state and card at the end). */
  expect: StepExpectation.optional(),
  /** How many times the test is run (a model does not answer the same way every time). */
  runs: z.number().int().min(1).max(MAX_TEST_RUNS).optional(),
  /** The test passes when at least this share of its runs pass (default: the run's, else 1). */
  min_pass_rate: z.number().min(0).max(1).optional(),
});
export type FlowTest = z.infer<typeof FlowTest>;

export const FlowTestSuite = z.strictObject({
  /** The `id` of the flow document the tests are for (informative; the CLI names the flow file). */
  flow: z.string().optional(),
  tests: z.array(FlowTest).min(1),
});
export type FlowTestSuite = z.infer<typeof FlowTestSuite>;

export interface TestParseResult {
  /** The tests, when there are no errors (warnings allowed); one for a single-test document. */
  tests: FlowTest[] | null;
  /** 'suite' when the document has `tests:`, else 'test'. */
  shape: 'suite' | 'test';
  diagnostics: TestDiagnostic[];
}

const utf8 = new TextEncoder();

/**
 * Parses a test or a suite. With `flow`, states and tools the tests name are checked against it
 * (warnings). Never throws.
 */
export function parseFlowTests(text: string, flow: FlowDocument | null = null): TestParseResult {
  try {
    return parseUnchecked(text, flow);
  } catch (error) {
    const message = `the document could not be read: ${error instanceof Error ? error.message : String(error)}`;
    return { tests: null, shape: 'test', diagnostics: [at('yaml_syntax', message, [], { line: 1, column: 1 })] };
  }
}

function at(code: TestDiagnosticCode, message: string, path: Array<string | number>, position: { line: number; column: number }): TestDiagnostic {
  return { severity: TEST_DIAGNOSTIC_CODES[code], code, message, path, ...position };
}

function parseUnchecked(text: string, flow: FlowDocument | null): TestParseResult {
  const start = { line: 1, column: 1 };
  if (typeof text !== 'string') return { tests: null, shape: 'test', diagnostics: [at('wrong_type', 'a flow test is YAML text', [], start)] };
  if (text.length > MAX_DOCUMENT_BYTES / 4 && utf8.encode(text).length > MAX_DOCUMENT_BYTES) {
    return { tests: null, shape: 'test', diagnostics: [at('document_too_large', `the document is larger than ${MAX_DOCUMENT_BYTES / 1024} KiB`, [], start)] };
  }
  const lines = new LineCounter();
  const doc = parseYaml(text, { lineCounter: lines, prettyErrors: false, strict: true });
  const locator = new DocumentLocator(doc, lines, text);
  const shape = isMap(doc.contents) && doc.contents.has('tests') ? 'suite' : 'test';
  const diagnostics: TestDiagnostic[] = [];
  // Before anything reads the document by recursion; the library's own overflow is not reported.
  const tooDeep = tooDeeplyNested(doc, text);
  if (tooDeep) diagnostics.push(at('too_deeply_nested', tooDeep.message, [], locator.offsetPosition(tooDeep.offset)));
  for (const problem of doc.errors) {
    if (!(tooDeep && isStackOverflowError(problem))) diagnostics.push(at('yaml_syntax', problem.message, [], locator.offsetPosition(problem.pos[0])));
  }
  if (diagnostics.length > 0) return finish(null, shape, diagnostics);

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch {
    return finish(null, shape, [at('too_many_aliases', `aliases in this document expand to more than ${MAX_YAML_ALIASES} copies`, [], start)]);
  }
  if (dataTooDeep(data)) return finish(null, shape, [at('too_deeply_nested', tooDeepMessage(true), [], start)]);
  if (data === null || data === undefined) {
    return finish(null, shape, [at('wrong_type', 'the document is empty: a test is a map with name and steps, a suite a map with tests', [], start)]);
  }

  const schema = shape === 'suite' ? FlowTestSuite : FlowTest;
  const parsed = schema.safeParse(data);
  const place = (path: DocPath, atKey = false) => locator.position(path, atKey);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) diagnostics.push(...describeIssue(issue, data, place));
  }
  const tests = parsed.success ? (shape === 'suite' ? (parsed.data as FlowTestSuite).tests : [parsed.data as FlowTest]) : null;
  // Checks zod cannot express well are made on whatever parsed, so a designer sees them at once.
  const rawTests = shape === 'suite' ? (data as { tests?: unknown }).tests : [data];
  if (Array.isArray(rawTests)) {
    rawTests.forEach((test, t) => {
      const base = shape === 'suite' ? ['tests', t] : [];
      diagnostics.push(...checkCallerOrSteps(test, base, place));
      const steps = (test as { steps?: unknown } | null)?.steps;
      if (!Array.isArray(steps)) {
        // A simulated caller's call-wide answers and expectations, checked as a step's are.
        const caller = asObject(test);
        if (caller?.caller !== undefined) diagnostics.push(...checkStep({ ...caller, user: '' }, base, flow, place).filter((d) => d.code !== 'nothing_to_check'));
        return;
      }
      steps.forEach((step, s) => diagnostics.push(...checkStep(step, [...base, 'steps', s], flow, place)));
    });
  }
  return finish(hasTestErrors(diagnostics) ? null : tests, shape, diagnostics);
}

export function hasTestErrors(diagnostics: ReadonlyArray<TestDiagnostic>): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}

function finish(tests: FlowTest[] | null, shape: 'suite' | 'test', diagnostics: TestDiagnostic[]): TestParseResult {
  // zod reports a wrong value once per union branch: one place, one diagnostic.
  const seen = new Set<string>();
  const unique = diagnostics.filter((d) => {
    const key = `${d.code}\n${d.path.join('\u0000')}\n${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const order = (d: TestDiagnostic) => (d.severity === 'error' ? 0 : 1);
  unique.sort((a, b) => order(a) - order(b) || a.line - b.line || a.column - b.column);
  return { tests, shape, diagnostics: unique };
}

type Place = (path: DocPath, atKey?: boolean) => { line: number; column: number };

function valueAt(root: unknown, path: DocPath): unknown {
  let current = root;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = Object.hasOwn(current, segment) ? (current as Record<string | number, unknown>)[segment] : undefined;
  }
  return current;
}

const KIND_WORDS: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'a map',
  record: 'a map',
  array: 'a list',
};

function describeIssue(issue: z.core.$ZodIssue, root: unknown, place: Place): TestDiagnostic[] {
  const path = issue.path.filter((s): s is string | number => typeof s !== 'symbol');
  const value = valueAt(root, path);
  const where = describePath(path);
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => {
        // A single test's own keys at the top of its document; a suite's are flow and tests.
        const known = path.length === 0 ? Object.keys((asObject(root)?.tests !== undefined ? FlowTestSuite : FlowTest).shape).join(', ') : knownKeys(path);
        return at('unknown_key', `${where} has an unknown key "${key}"${known ? `; allowed keys: ${known}` : ''}`, [...path, key], place([...path, key], true));
      });
    case 'invalid_type': {
      if (value === undefined) {
        const key = path[path.length - 1];
        const parent = path.slice(0, -1);
        return [at('missing_key', `${describePath(parent)} needs the key "${String(key)}"`, parent, place(parent, true))];
      }
      const expected = KIND_WORDS[issue.expected] ?? issue.expected;
      return [at('wrong_type', `${where} must be ${expected}, not ${describeValue(value)}`, path, place(path))];
    }
    case 'invalid_union': {
      const last = path[path.length - 1];
      const expected = last === 'tool_called' ? 'a map with name (and arguments), or a list of them' : 'text, a number or true/false';
      return [at('wrong_type', `${where} must be ${expected}, not ${describeValue(value)}`, path, place(path))];
    }
    case 'too_small':
      if (Array.isArray(value)) return [at('wrong_type', `${where} must list at least one item`, path, place(path))];
      if (typeof value === 'string') return [at('wrong_type', `${where} must not be empty`, path, place(path))];
      return [at('wrong_type', `${where} must be at least ${String(issue.minimum)}`, path, place(path))];
    case 'too_big':
      return [at('wrong_type', `${where} must be at most ${String(issue.maximum)}`, path, place(path))];
    default:
      return [at('wrong_type', `${where}: ${issue.message}`, path, place(path))];
  }
}

function knownKeys(path: ReadonlyArray<string | number>): string | null {
  const last = path.filter((s) => typeof s === 'string').pop();
  // An answer's own keys: the path ends with ['tool_results', tool].
  if (path.length >= 2 && path[path.length - 2] === 'tool_results') return Object.keys(ToolAnswer.shape).join(', ');
  const shapes: Record<string, z.ZodObject> = {
    expect: StepExpectation,
    simulate: TestStep.shape.simulate.unwrap(),
    steps: TestStep,
    tests: FlowTest,
    tool_called: ToolCallExpectation,
    caller: SimulatedCaller,
    judge: Judge,
  };
  // A step's own keys: the path ends with ['steps', n].
  const schema = typeof path[path.length - 1] === 'number' ? shapes[String(path[path.length - 2])] : last ? shapes[last] : undefined;
  if (schema) return Object.keys(schema.shape).join(', ');
  if (path.length === 0) return null;
  return null;
}

/** A test has either scripted steps or a simulated caller; a caller's call-wide keys go with the caller. */
function checkCallerOrSteps(raw: unknown, path: Array<string | number>, place: Place): TestDiagnostic[] {
  const test = asObject(raw);
  if (!test) return [];
  const where = path.length > 0 ? describePath(path) : 'the test';
  const hasSteps = test.steps !== undefined;
  const hasCaller = test.caller !== undefined;
  if (hasSteps && hasCaller) {
    return [at('caller_or_steps', `${where} has both steps and a caller: a test is scripted (steps) or played by a simulated caller (caller), not both`, [...path, 'caller'], place([...path, 'caller'], true))];
  }
  if (!hasSteps && !hasCaller) {
    return [at('missing_key', `${where} needs the key "steps" (a scripted test) or "caller" (a simulated caller)`, path, place(path, true))];
  }
  if (hasCaller) return [];
  return (['caller_llm', 'judge', 'tool_results', 'expect'] as const)
    .filter((key) => test[key] !== undefined)
    .map((key) => at('caller_or_steps', `${where} has "${key}" beside steps: ${key === 'expect' || key === 'tool_results' ? `a scripted test says ${key} in each step` : `${key} goes with a simulated caller (caller)`}`, [...path, key], place([...path, key], true)));
}

function asObject(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

const ACTION_WORDS = { user: 'speaks (user)', simulate: 'simulates a tool', dtmf: 'presses keys (dtmf)' } as const;

function checkStep(raw: unknown, path: Array<string | number>, flow: FlowDocument | null, place: Place): TestDiagnostic[] {
  const step = asObject(raw);
  if (!step) return [];
  const out: TestDiagnostic[] = [];
  const actions = (['user', 'simulate', 'dtmf'] as const).filter((action) => step[action] !== undefined);
  if (actions.length > 1) {
    const second = actions[1]!;
    out.push(at('two_actions', `${describePath(path)} both ${actions.map((a) => ACTION_WORDS[a]).join(' and ')}: a step does one thing; split it in two`, [...path, second], place([...path, second], true)));
  }
  const expect = asObject(step.expect);
  const acts = actions.length > 0;
  if (!acts && step.barge_in_after_ms === undefined && (!expect || Object.keys(expect).length === 0)) {
    out.push(at('nothing_to_check', `${describePath(path)} neither acts (user, simulate, dtmf) nor expects anything`, path, place(path)));
  }
  if (!acts && step.within_ms !== undefined) {
    out.push(at('nothing_to_check', `${describePath(path)} has within_ms but nothing for the agent to answer: add user, simulate or dtmf`, [...path, 'within_ms'], place([...path, 'within_ms'], true)));
  }
  if (!acts && step.barge_in_after_ms !== undefined) {
    out.push(at('nothing_to_check', `${describePath(path)} has barge_in_after_ms but nothing to barge in with: add user`, [...path, 'barge_in_after_ms'], place([...path, 'barge_in_after_ms'], true)));
  }
  const transferredTo = expect?.transferred_to;
  const transferPath = [...path, 'expect', 'transferred_to'];
  if (typeof transferredTo === 'string') {
    const problem = transferTargetProblem(transferredTo);
    if (problem) out.push(at('invalid_transfer_target', `${describePath(transferPath)}: ${problem}`, transferPath, place(transferPath)));
    else if (flow && !Object.values(flow.states).some((state) => state.on_enter?.transfer?.to === transferredTo)) {
      out.push(at('unknown_transfer_target', `no state of the flow transfers to ${transferredTo}`, transferPath, place(transferPath)));
    }
  }
  for (const key of ['says', 'not_says', 'card', 'prompt'] as const) {
    const value = expect?.[key];
    if (typeof value !== 'string') continue;
    const problem = patternProblem(value);
    if (problem) out.push(at('invalid_pattern', `${describePath([...path, 'expect', key])}: ${problem}`, [...path, 'expect', key], place([...path, 'expect', key])));
  }
  // A global tool (settings.global_tools) is offered in every state without being listed.
  const tools = flow ? new Set([...Object.values(flow.states).flatMap((state) => state.agent.tools ?? []), ...Object.keys(flow.settings?.global_tools ?? {})]) : new Set<string>();
  checkToolAnswers(step, path, flow, tools, (code, message, where, atKey = false) => out.push(at(code, message, where, place(where, atKey))));
  if (!flow) return out;
  if (typeof expect?.state === 'string' && !Object.hasOwn(flow.states, expect.state)) {
    out.push(at('unknown_state', `the flow has no state "${expect.state}"; its states: ${Object.keys(flow.states).join(', ')}`, [...path, 'expect', 'state'], place([...path, 'expect', 'state'])));
  }
  const called = expect?.tool_called;
  const calls = Array.isArray(called) ? called.map((c, i) => ({ c, p: [...path, 'expect', 'tool_called', i, 'name'] })) : called ? [{ c: called, p: [...path, 'expect', 'tool_called', 'name'] }] : [];
  const simulated = asObject(step.simulate);
  if (simulated) calls.push({ c: { name: simulated.tool }, p: [...path, 'simulate', 'tool'] });
  for (const { c, p } of calls) {
    const name = asObject(c)?.name;
    if (typeof name === 'string' && !tools.has(name)) {
      out.push(at('unknown_tool', `no state of the flow lists a tool "${name}"`, p, place(p)));
    }
  }
  return out;
}

// ── Files ───────────────────────────────────────────────────────────────────────────────────

/** The tool calls a step expects, as a list. */
export function expectedCalls(expect: StepExpectation | undefined): ToolCallExpectation[] {
  const called = expect?.tool_called;
  if (!called) return [];
  return Array.isArray(called) ? called : [called];
}

/**
 * A suite file of tests stored one per document: each test's text (comments kept) becomes an
 * item of `tests:`.
 */
export function suiteText(tests: ReadonlyArray<{ yaml: string }>, flowId?: string): string {
  const items = tests.map(({ yaml }) => {
    const lines = yaml.replace(/\s+$/, '').split('\n');
    return lines.map((line, i) => (i === 0 ? `  - ${line}` : line === '' ? '' : `    ${line}`)).join('\n');
  });
  return `${flowId ? `flow: ${JSON.stringify(flowId)}\n` : ''}tests:\n${items.join('\n\n')}\n`;
}

/** The YAML text of each test of a suite file, for storing them one by one: its own source text, dedented. */
export function splitSuite(text: string): string[] {
  const doc = parseYaml(text, { strict: true });
  const tests = doc.get('tests', true);
  if (!isSeq(tests)) return [];
  return tests.items.flatMap((item) => {
    const range = (item as { range?: [number, number, number] }).range;
    if (!range) return [];
    const indent = range[0] - (text.lastIndexOf('\n', range[0] - 1) + 1);
    const lines = text.slice(range[0], range[1]).replace(/\s+$/, '').split('\n');
    const dedented = lines.map((line, i) => (i === 0 ? line : line.slice(Math.min(indent, line.length - line.trimStart().length))));
    return [`${dedented.join('\n')}\n`];
  });
}
