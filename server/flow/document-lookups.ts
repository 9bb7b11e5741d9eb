// What a validated flow document says about a state and its tools, as the runtime reads it: the
// tools a state offers, the definition a tool name resolves to, and where an accepted call leads.
// Own keys only (own-keys.ts): a tool named `toString` is not Object.prototype's.
import { ownValue } from './own-keys.ts';
import type { FlowDocument, FlowState, ToolDefinition } from './types.ts';

/**
 * The tools a state lets the model call, duplicates removed, in listed order, then the flow's
 * global tools the state neither lists nor hides with its own tool of that name.
 */
export function listedTools(document: FlowDocument, state: FlowState): string[] {
  const listed = new Set(state.agent.tools ?? []);
  for (const name of Object.keys(document.settings?.global_tools ?? {})) {
    if (!ownValue(state.tools, name) && ownValue(document.tools, name)) listed.add(name);
  }
  return [...listed];
}

/** A listed tool's definition in a state: the state's own, else the flow's top-level one. */
export function toolDefinition(document: FlowDocument, stateName: string, name: string): ToolDefinition | undefined {
  return ownValue(ownValue(document.states, stateName)?.tools, name) ?? ownValue(document.tools, name);
}

/** Where an accepted call of `name` leads: the state's transition, else a global tool's target. */
export function callTarget(document: FlowDocument, state: FlowState, name: string): string | undefined {
  const own = ownValue(state.transitions?.on_tool_call, name);
  if (own !== undefined || ownValue(state.tools, name)) return own;
  return ownValue(document.settings?.global_tools, name)?.target;
}

// Validation guarantees these, but a runtime built from an unvalidated document should fail
// at construction, not in the middle of a call.
export function assertStatesExist(document: FlowDocument): void {
  if (ownValue(document.states, document.initial_state) === undefined) {
    throw new Error(`initial_state '${document.initial_state}' is not a state of the flow`);
  }
  for (const [stateName, state] of Object.entries(document.states)) {
    for (const [tool, target] of Object.entries(state.transitions?.on_tool_call ?? {})) {
      if (ownValue(document.states, target) === undefined) {
        throw new Error(`state '${stateName}' moves on '${tool}' to '${target}', which is not a state of the flow`);
      }
    }
  }
}
