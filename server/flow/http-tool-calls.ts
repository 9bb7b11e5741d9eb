// An http tool (docs/flows.md) as the runtime sees it, in two steps: the request the engine sends
// for an accepted call, then what its answer does — the fields it stores (`http.store`) and the
// state it moves to (`next_state`, when the state's `on_tool_result` allows it). The sending
// itself takes time and the network, so it is the engine's (engine/http-tools.ts).
import { ownValue, setOwn } from './own-keys.ts';
import { DEFAULT_HTTP_TIMEOUT_MS, NEXT_STATE_FIELD, type HttpToolRequest } from './runtime-types.ts';
import type { VariableValue } from './template.ts';
import { resultField, toVariable } from './tool-results.ts';
import type { FlowState, HttpAction, ToolDefinition } from './types.ts';

export function httpRequest(
  callNumber: number,
  tool: string,
  http: HttpAction,
  args: Record<string, VariableValue>,
  variables: Readonly<Record<string, VariableValue>>,
): HttpToolRequest {
  return {
    callNumber,
    tool,
    url: http.url,
    method: http.method ?? 'POST',
    headers: { ...(http.headers ?? {}) },
    timeoutMs: http.timeout_ms ?? DEFAULT_HTTP_TIMEOUT_MS,
    arguments: { ...args },
    variables: { ...variables },
  };
}

/** The answer's fields the tool's `http.store` names, as variables; a field that is absent or not a value is skipped. */
export function storedFields(definition: ToolDefinition | undefined, body: unknown): Record<string, VariableValue> {
  const stored: Record<string, VariableValue> = {};
  for (const [variable, path] of Object.entries(definition?.http?.store ?? {})) {
    const value = toVariable(resultField(body, path));
    if (value !== undefined) setOwn(stored, variable, value);
  }
  return stored;
}

/**
 * Where an answer moves a session still in the state its call was made in: the state the answer
 * names in `next_state` when the state's `on_tool_result` lists it for this tool, else the call's
 * own target (`fallback`). A `next_state` the document does not list is refused with a note for
 * the model.
 */
export function answerTarget(
  state: FlowState,
  tool: string,
  body: unknown,
  fallback: string | undefined,
): { target: string | undefined; note?: string } {
  const asked = resultField(body, NEXT_STATE_FIELD);
  const allowed = ownValue(state.transitions?.on_tool_result, tool) ?? [];
  if (typeof asked === 'string' && allowed.includes(asked)) return { target: asked };
  const target = fallback;
  if (asked === undefined) return { target };
  const note = `the result's next_state ${JSON.stringify(asked)} is not one this tool may lead to (${allowed.join(', ') || 'none'}); the state did not change that way`;
  return { target, note };
}
