// "Save as test" on an http tool's test request (the tool card's "Send a test request"): the
// answer the service gave becomes a flow test's `tool_results` for that tool (docs/testing.md#flow-tests),
// so the test replays the branch that answer takes without calling the service again. The test
// walks to the tool's state by calling, by hand (`simulate`), the tools of the shortest path of
// plain transitions from the start state, then calls the tool itself with the same arguments the
// request was sent with, given that answer; it expects the state the answer chooses when its
// `next_state` is one the tool may move to. An http tool on the way is given an answer that moves
// it there (a `next_state` its state lets it choose, or an empty body for its own target). Pure,
// so it is unit-tested without a browser.
import { stringify } from 'yaml';
import { initialStateOf, readStates, type FlowData, type ToolView } from '../../../../server/flow/graph/flow-data.ts';

export interface TriedRequest {
  ok: boolean;
  status: number | null;
  body?: unknown;
  error?: string;
}

/** The answer as a test gives it, or null for one a test cannot give (refused, not JSON: no status). */
export function answerOfRequest(tried: TriedRequest): Record<string, unknown> | null {
  if (tried.ok) return { ...(tried.status !== null && tried.status !== 200 ? { status: tried.status } : {}), body: tried.body ?? null };
  // A 2xx that failed (not JSON) is no answer a test can give.
  if (tried.status !== null) return tried.status >= 200 && tried.status < 300 ? null : { status: tried.status };
  return /no answer within|timed out/i.test(tried.error ?? '') ? { timeout: true } : null;
}

/** An argument of each parameter's type: its first allowed value, else a plain sample (as the card sends). */
export function sampleArguments(tool: Pick<ToolView, 'parameters'>): Record<string, unknown> {
  const sample: Record<string, unknown> = {};
  for (const p of tool.parameters) {
    if (p.enum && p.enum.length > 0) sample[p.name] = p.enum[0];
    else sample[p.name] = p.type === 'number' || p.type === 'integer' ? 1 : p.type === 'boolean' ? true : p.type === 'array' ? [] : p.type === 'object' ? {} : 'test';
  }
  return sample;
}

type Simulate = { tool: string; arguments?: Record<string, unknown> };
type Step = { simulate: Simulate; tool_results?: Record<string, unknown> };

const simulateOf = (tool: ToolView, args = sampleArguments(tool)): Simulate => ({ tool: tool.name, ...(Object.keys(args).length > 0 ? { arguments: args } : {}) });

/** The moves a listed tool makes from its state, each with the step that makes it. */
function movesOf(tool: ToolView): Array<{ to: string; step: Step }> {
  if (!tool.listed) return [];
  if (!tool.http) return tool.target === null ? [] : [{ to: tool.target, step: { simulate: simulateOf(tool) } }];
  const answered = (body: Record<string, unknown>): Step => ({ simulate: simulateOf(tool), tool_results: { [tool.name]: { body } } });
  return [
    ...(tool.resultTargets ?? []).map((to) => ({ to, step: answered({ next_state: to }) })),
    ...(tool.target === null ? [] : [{ to: tool.target, step: answered({}) }]),
  ];
}

/** The steps, called by hand, from the start state to `target` by the fewest moves; null when none gets there. */
export function pathTo(data: FlowData | null, target: string): Step[] | null {
  const start = initialStateOf(data);
  if (start === null) return null;
  const states = new Map(readStates(data).map((s) => [s.name, s]));
  const came = new Map<string, { from: string; step: Step } | null>([[start, null]]);
  const queue = [start];
  while (queue.length > 0 && !came.has(target)) {
    const here = queue.shift()!;
    for (const tool of states.get(here)?.tools ?? []) {
      for (const move of movesOf(tool)) {
        if (came.has(move.to) || !states.has(move.to)) continue;
        came.set(move.to, { from: here, step: move.step });
        queue.push(move.to);
      }
    }
  }
  if (!came.has(target)) return null;
  const steps: Step[] = [];
  for (let at = came.get(target); at; at = came.get(at.from)) steps.unshift(at.step);
  return steps;
}

/** The YAML of a test named `name`: the way to `state`, then `tool` called with `args` and given the answer. */
export function toolAnswerTest(input: { name: string; data: FlowData | null; state: string; tool: ToolView; arguments: Record<string, unknown>; tried: TriedRequest }): string | null {
  const answer = answerOfRequest(input.tried);
  if (!answer) return null;
  const path = pathTo(input.data, input.state);
  const body = answer.body;
  const chosen = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>).next_state : undefined;
  const results = input.tool.resultTargets ?? [];
  // A successful answer moves to the state it chooses, or to the tool's own target; a failed one stays.
  const failed = answer.timeout === true || !input.tried.ok;
  const expected = failed ? input.state : typeof chosen === 'string' && results.includes(chosen) ? chosen : (input.tool.target ?? input.state);
  const steps = [
    ...(path ?? []),
    { simulate: simulateOf(input.tool, input.arguments), tool_results: { [input.tool.name]: answer }, expect: { state: expected } },
  ];
  const header =
    path === null
      ? `# From a test request of ${input.tool.name}. No way by tool calls reaches ${input.state} from the start: add the steps that bring the call there first.\n`
      : `# From a test request of ${input.tool.name}: the service's answer is given to the call, so the test takes its branch without calling the service.\n`;
  return header + stringify({ name: input.name, steps }, { lineWidth: 0, flowCollectionPadding: false, collectionStyle: 'block' });
}
