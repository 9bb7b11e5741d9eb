// Whether a tool call may be applied now, and the arguments it stores when it may: the turn's
// round cap, one move per model response, the state's listed tools, then the tool's declared
// parameters. The reasons are written for the model, which reads them as the tool result.
import type { RejectionCode } from './runtime-types.ts';
import type { VariableValue } from './template.ts';
import { checkArguments, type ParsedArguments } from './tool-arguments.ts';
import { MAX_TOOL_ROUNDS_PER_TURN, type ToolDefinition } from './types.ts';

export interface ToolCallContext {
  name: string;
  fromState: string;
  toolRoundsLeft: number;
  /** The state an earlier call of this model response moved to; null when none did. */
  movedToInResponse: string | null;
  /** The tools the state offers (document-lookups.ts listedTools). */
  listed: readonly string[];
  parsed: ParsedArguments;
  definition: ToolDefinition | undefined;
}

export type ToolCallCheck =
  | { ok: true; values: Record<string, VariableValue> }
  | { ok: false; code: RejectionCode; reason: string };

export function checkToolCall(call: ToolCallContext): ToolCallCheck {
  const { name, fromState, listed, parsed } = call;
  if (call.toolRoundsLeft === 0) {
    return {
      ok: false,
      code: 'round_limit',
      reason: `the limit of ${MAX_TOOL_ROUNDS_PER_TURN} tool rounds per user turn is reached; answer the user in words`,
    };
  }
  if (call.movedToInResponse !== null) {
    return {
      ok: false,
      code: 'state_changed',
      reason: `the state changed to '${call.movedToInResponse}'; call tools of the new state in your next response`,
    };
  }
  if (!listed.includes(name)) {
    const available =
      listed.length === 0
        ? `no tools are available in state '${fromState}'`
        : `available tools: ${listed.join(', ')}`;
    return { ok: false, code: 'unlisted_tool', reason: `tool '${name}' is not available in state '${fromState}'; ${available}` };
  }
  if (!parsed.ok) {
    return { ok: false, code: 'invalid_arguments', reason: `arguments for tool '${name}' ${parsed.problem}; send a JSON object` };
  }
  const checked = checkArguments(call.definition?.parameters ?? {}, parsed.value);
  if (checked.problems.length > 0) {
    // A missing argument is reported as the code when there is one: supplying it is the
    // first thing the model has to fix. The reason lists every problem either way.
    const code = checked.problems.some((p) => p.kind === 'missing') ? 'missing_argument' : 'mistyped_argument';
    const details = checked.problems.map((p) => p.message).join('; ');
    return { ok: false, code, reason: `invalid arguments for tool '${name}': ${details}` };
  }
  return { ok: true, values: checked.values };
}
