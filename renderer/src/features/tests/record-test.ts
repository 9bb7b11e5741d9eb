// Record → replay (docs/testing.md#flow-tests): a conversation that happened — a stored session, or
// a test-talk that just ended — as a flow test. Each thing the caller said becomes a `user` step
// and each call made by hand a `simulate` step; the calls accepted in answer become its
// `tool_called` and the state the flow was in when the next step began its `state`. What the flow's
// http tools were answered during a step becomes its `tool_results`, so the replay takes the same
// branches without calling the service (a simulated http call expects the state its answer chose).
// The designer then trims and names it. Pure, so it is unit-tested without a browser.
import { stringify } from 'yaml';

export interface RecordedConversation {
  transcript: ReadonlyArray<{ role: 'user' | 'agent'; text: string; at: number }>;
  tool_calls: ReadonlyArray<{ name: string; arguments: unknown; status: 'accepted' | 'rejected'; to_state: string; source: 'model' | 'simulator'; at: number }>;
  path: ReadonlyArray<{ state: string; at: number }>;
  /** The http tools' answers (absent from servers before they were kept). */
  tool_results?: ReadonlyArray<{ name: string; ok: boolean; http_status: number | null; result: unknown; error: string | null; to_state: string; source: 'model' | 'simulator'; at: number }>;
}

type RecordedAnswer = NonNullable<RecordedConversation['tool_results']>[number];

type Step = { user?: string; simulate?: { tool: string; arguments?: Record<string, unknown> }; tool_results?: Record<string, unknown>; expect?: Record<string, unknown> };

/**
 * An answer as a test gives it: the body (and a status other than 200), a failing status, or a
 * timeout. A failure with no status and no timeout (a refused connection) is left out: a call
 * the test gives no answer fails too.
 */
function answerOf(answer: RecordedAnswer): Record<string, unknown> | null {
  if (answer.ok) return { ...(answer.http_status !== null && answer.http_status !== 200 ? { status: answer.http_status } : {}), body: answer.result };
  if (answer.http_status !== null) return { status: answer.http_status };
  return /no answer within/.test(answer.error ?? '') ? { timeout: true } : null;
}

const asArguments = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length > 0 ? (value as Record<string, unknown>) : undefined;

/** The conversation as the YAML of one test named `name`. */
export function recordedTest(name: string, conversation: RecordedConversation): string {
  const actions = [
    ...conversation.transcript.filter((l) => l.role === 'user' && l.text.trim() !== '').map((l) => ({ at: l.at, state: null as string | null, step: { user: l.text } as Step })),
    ...conversation.tool_calls
      .filter((c) => c.source === 'simulator' && c.status === 'accepted')
      .map((c) => {
        const args = asArguments(c.arguments);
        return { at: c.at, state: c.to_state, step: { simulate: { tool: c.name, ...(args ? { arguments: args } : {}) } } as Step };
      }),
  ].sort((a, b) => a.at - b.at);

  const steps = actions.map(({ at, state: calledTo, step }, i) => {
    const until = actions[i + 1]?.at ?? Infinity;
    // The step's http answers: one per tool (the runner gives it to each call of that tool in the step).
    const answers = (conversation.tool_results ?? []).filter((a) => a.at >= at && a.at < until);
    const given: Record<string, unknown> = {};
    for (const answer of answers) {
      const written = Object.hasOwn(given, answer.name) ? null : answerOf(answer);
      if (written) given[answer.name] = written;
    }
    if (Object.keys(given).length > 0) step = { ...step, tool_results: given };
    // A simulated http call moves (if at all) when its answer comes: the answer's state is the call's.
    const simulatedAnswer = step.simulate ? answers.find((a) => a.source === 'simulator' && a.name === step.simulate!.tool) : undefined;
    const simulatedTo = simulatedAnswer ? simulatedAnswer.to_state : calledTo;
    const calls = conversation.tool_calls.filter((c) => c.source === 'model' && c.status === 'accepted' && c.at >= at && c.at < until);
    const entered = conversation.path.filter((p) => p.at < until);
    const expect: Record<string, unknown> = {};
    if (calls.length > 0) {
      const list = calls.map((c) => {
        const args = asArguments(c.arguments);
        return { name: c.name, ...(args ? { arguments: args } : {}) };
      });
      expect.tool_called = list.length === 1 ? list[0] : list;
    }
    // A call made by hand is the state it led to, whatever the model did after it.
    const state = simulatedTo ?? entered.at(-1)?.state;
    if (state) expect.state = state;
    return Object.keys(expect).length > 0 ? { ...step, expect } : step;
  });

  const header = '# Recorded from a conversation: trim the steps to what matters, and name the test.\n';
  return header + stringify({ name, steps }, { lineWidth: 0, flowCollectionPadding: false, collectionStyle: 'block' });
}
