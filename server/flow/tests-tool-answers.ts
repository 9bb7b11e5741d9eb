// A flow test's answers to http tools (docs/flows.md, docs/testing.md): a step may say what the account's
// service answers when a tool of the flow that calls it (`http`) is called during the step, so a
// test reaches each `on_tool_result` branch — and the failure path — without a network:
//
//   - user: Monday please
//     tool_results:
//       check_availability: {body: {next_state: offer_slot, slot: "9:30"}}   # status 200
//   - user: Tuesday then
//     tool_results:
//       check_availability: {status: 503}        # the service fails: the model gets an error
//   - user: Wednesday?
//     tool_results:
//       check_availability: {timeout: true}      # no answer within the tool's timeout_ms
//
// Tests never call the real service: an http tool called in a step that gives it no answer gets
// an error result saying so, as a service that is down would (the call goes on). An answer serves
// every call of its tool during its step, the last step's answers no later one. Kept apart from
// tests-format.ts, which holds the rest of the format, so each file reads as one idea.
//
// Pure TypeScript: the studio bundles this folder, so no Node APIs here.
import { z } from 'zod';
import { describePath } from './structure.ts';
import type { TestDiagnosticCode } from './tests-format.ts';
import type { FlowDocument, ToolDefinition } from './types.ts';

export const ToolAnswer = z.strictObject({
  /** The service's HTTP status; absent means 200. A status outside 2xx is a failed call. */
  status: z.number().int().min(100).max(599).optional(),
  /** The JSON the service answers; `next_state` in it may choose among the on_tool_result states. */
  body: z.unknown().optional(),
  /** true: the service does not answer within the tool's timeout_ms. */
  timeout: z.boolean().optional(),
});
export type ToolAnswer = z.infer<typeof ToolAnswer>;

export const ToolAnswers = z.record(z.string(), ToolAnswer);
export type ToolAnswers = z.infer<typeof ToolAnswers>;

type Report = (code: TestDiagnosticCode, message: string, path: Array<string | number>, atKey?: boolean) => void;

const asObject = (value: unknown): Record<string, unknown> | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

/** The tool's definitions in the flow: each state's own, and the top-level one. */
function definitionsOf(flow: FlowDocument, tool: string): ToolDefinition[] {
  const owners = [flow.tools, ...Object.values(flow.states).map((state) => state.tools)];
  return owners.flatMap((tools) => (tools && Object.hasOwn(tools, tool) ? [tools[tool]!] : []));
}

/**
 * What a step's `tool_results` cannot mean (errors) or will not do (warnings): an answer both
 * timed out and given, answers in a step where nothing calls a tool, and — against the flow —
 * a tool that does not call a service, or a `next_state` no state lets the tool's answer choose.
 */
export function checkToolAnswers(step: Record<string, unknown>, path: Array<string | number>, flow: FlowDocument | null, listed: ReadonlySet<string>, report: Report): void {
  const answers = asObject(step.tool_results);
  if (!answers) return;
  const here = [...path, 'tool_results'];
  if (step.user === undefined && step.simulate === undefined && Object.keys(answers).length > 0) {
    report('unused_answer', `${describePath(path)} neither speaks (user) nor simulates a tool, so nothing calls a tool in it and its tool_results are never used`, here, true);
  }
  for (const [tool, raw] of Object.entries(answers)) {
    const answer = asObject(raw);
    if (!answer) continue;
    const at = [...here, tool];
    if (answer.timeout === true && (answer.status !== undefined || answer.body !== undefined)) {
      report('conflicting_answer', `the answer for ${tool} times out, so it has no status or body: keep timeout: true, or the status and body`, [...at, 'timeout'], true);
    }
    if (!flow) continue;
    if (!listed.has(tool)) {
      report('unknown_tool', `no state of the flow lists a tool "${tool}"`, at, true);
      continue;
    }
    const definitions = definitionsOf(flow, tool);
    if (!definitions.some((d) => d.http)) {
      report('unused_answer', `${tool} does not call a service (it has no http action), so this answer is never used`, at, true);
      continue;
    }
    const asked = asObject(answer.body)?.next_state;
    if (typeof asked !== 'string') continue;
    const choices = new Set(Object.values(flow.states).flatMap((state) => state.transitions?.on_tool_result?.[tool] ?? []));
    if (!choices.has(asked)) {
      const allowed = choices.size > 0 ? `it may choose: ${[...choices].join(', ')}` : `no state lists on_tool_result for ${tool}`;
      report('unknown_state', `no state lets ${tool}'s answer choose "${asked}" (${allowed}); the session would not move there`, [...at, 'body', 'next_state']);
    }
  }
}
