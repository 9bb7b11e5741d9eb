// The account's service as a flow test plays it: the engine's http tool sender (engine/http-tools)
// answered from the current step's `tool_results` (flow/tests-tool-answers.ts) instead of the
// network. The answer goes through the engine's own path — the runtime stores its fields, lets
// its `next_state` choose among the on_tool_result states, and the model gets it — so a test of a
// branch exercises what a call does. Failures read as the real sender's do.
import type { SendToolRequest, ToolRequestInput, ToolRequestResult } from '../engine/http-tools.ts';
import type { ToolAnswers } from '../flow/tests-tool-answers.ts';

/** A sender whose answers are whatever `current()` gives when a request is made. */
export function scriptedToolSender(current: () => ToolAnswers | undefined): SendToolRequest {
  return (input) => Promise.resolve(answer(input, current()));
}

function toolOf(input: ToolRequestInput): string {
  try {
    const body = JSON.parse(input.body) as { tool?: unknown };
    return typeof body.tool === 'string' ? body.tool : '';
  } catch {
    return '';
  }
}

function answer(input: ToolRequestInput, answers: ToolAnswers | undefined): ToolRequestResult {
  const tool = toolOf(input);
  const given = answers && Object.hasOwn(answers, tool) ? answers[tool]! : undefined;
  // The test's clock is its own: an answer takes no time, a timeout the tool's whole timeout.
  if (!given) return { ok: false, status: null, error: `the test gives no answer for ${tool} in this step (tests never call the real service): add tool_results: {${tool}: {body: …}} to the step`, durationMs: 0 };
  if (given.timeout) return { ok: false, status: null, error: `no answer within ${input.timeoutMs} ms`, durationMs: input.timeoutMs };
  const status = given.status ?? 200;
  const body = given.body === undefined ? null : given.body;
  if (status >= 300 && status < 400) return { ok: false, status, error: `redirects are not followed (answered ${status})`, durationMs: 0 };
  if (status < 200 || status >= 300) {
    const text = body === null ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    return { ok: false, status, error: `answered ${status}${text.trim() ? `: ${text.trim().slice(0, 200)}` : ''}`, durationMs: 0 };
  }
  return { ok: true, status, body, durationMs: 0 };
}
