// The adherence figure (docs/api.md#the-adherence-figure): how a model kept to its flow, counted
// from the tool calls a session or a flow-test run saw. The flow decides every move, so the
// figure says what the model tried and what the flow kept out: calls of a tool the state does not
// offer, and arguments that do not fit the tool. A refused call never moves anything.
import type { ServerEventOf } from './events.ts';

export interface Adherence {
  /** The model's tool calls, accepted or refused. */
  tool_calls: number;
  /** Accepted calls that moved the flow to another state. */
  moves: number;
  /** Refused: a tool the state does not offer (or one offered before the state moved in the same response). */
  rejected_off_state: number;
  /** Refused: arguments that are not a JSON object, miss a required one, or have the wrong type. */
  rejected_arguments: number;
  /** Refused for another reason (more tool rounds in one turn than the flow allows). */
  rejected_other: number;
}

/** A tool call as an adherence count needs it: its outcome, its code when refused (a RejectionCode), and its states. */
export type CountedCall = Pick<ServerEventOf<'tool_call'>, 'status' | 'reason' | 'from_state' | 'to_state'> & { code?: string };

export function noAdherence(): Adherence {
  return { tool_calls: 0, moves: 0, rejected_off_state: 0, rejected_arguments: 0, rejected_other: 0 };
}

const OFF_STATE: ReadonlySet<string> = new Set(['unlisted_tool', 'state_changed']);
const BAD_ARGUMENTS: ReadonlySet<string> = new Set(['invalid_arguments', 'missing_argument', 'mistyped_argument']);

/** Which count a refused call goes to; a call stored before refusals carried a code is read by its reason. */
function rejectionKind(call: CountedCall): 'rejected_off_state' | 'rejected_arguments' | 'rejected_other' {
  const reason = call.reason ?? '';
  const code = call.code ?? (/is not available in state|state changed/.test(reason) ? 'unlisted_tool' : /arguments/.test(reason) ? 'invalid_arguments' : null);
  if (code && OFF_STATE.has(code)) return 'rejected_off_state';
  if (code && BAD_ARGUMENTS.has(code)) return 'rejected_arguments';
  return 'rejected_other';
}

/** Counts one of the model's calls into `adherence`. */
export function countToolCall(adherence: Adherence, call: CountedCall): void {
  adherence.tool_calls += 1;
  if (call.status === 'rejected') adherence[rejectionKind(call)] += 1;
  else if (call.to_state !== call.from_state) adherence.moves += 1;
}

/** The sum of several counts (a test's runs, a state's calls over runs). */
export function addAdherence(into: Adherence, more: Adherence): Adherence {
  for (const key of Object.keys(into) as Array<keyof Adherence>) into[key] += more[key];
  return into;
}
