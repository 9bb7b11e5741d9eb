// Replaying recorded sessions against a draft (docs/testing.md#replaying-recorded-sessions): each
// stored session of the published version becomes a test whose steps are its caller's turns, each
// step answering the flow's http tools as the service answered them then (its tool_result events)
// and expecting the state the session was in when the agent had answered that turn. Run against
// the draft with the configured model playing the agent, a step that fails its `state` check is
// where the draft's path leaves the recorded one, the recorded state against the draft's.
import { stringify } from 'yaml';
import type { ToolAnswer } from '../flow/tests-tool-answers.ts';
import type { ServerEvent } from '../protocol/events.ts';

/** The most recorded sessions one replay takes. */
export const MAX_REPLAYED_SESSIONS = 20;

interface Step {
  user: string;
  tool_results?: Record<string, ToolAnswer>;
  expect: { state: string };
}

/** The test a recorded session replays as, as YAML; null when its caller never said anything. */
export function replayTestOf(sessionId: string, events: readonly ServerEvent[]): string | null {
  const steps: Step[] = [];
  let state = '';
  for (const event of events) {
    if (event.type === 'flow_state') {
      state = event.state;
      const current = steps.at(-1);
      if (current) current.expect.state = state;
    } else if (event.type === 'transcript' && event.role === 'user' && event.final && event.text.trim()) {
      steps.push({ user: event.text, expect: { state } });
    } else if (event.type === 'tool_result' && event.source === 'model') {
      const current = steps.at(-1);
      // One answer per tool in a step (a test's answer serves every call of its tool there): the first.
      if (!current || current.tool_results?.[event.name]) continue;
      const answer: ToolAnswer = event.http_status === null ? { timeout: true } : { ...(event.http_status !== 200 ? { status: event.http_status } : {}), ...(event.result !== null && event.result !== undefined ? { body: event.result } : {}) };
      current.tool_results = { ...current.tool_results, [event.name]: answer };
    }
  }
  if (steps.length === 0) return null;
  return stringify({ name: `replay of session ${sessionId}`, steps }, { lineWidth: 0 });
}
