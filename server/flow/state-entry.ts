// What entering a state does without the model (the on-entry actions, docs/flows.md): its
// `on_enter.set` is applied to the variables, and the rest is described for the engine to do —
// the line to say, ending the call, handing it to a person, whether the model answers,
// forgetting the conversation, barge-in off while the entry is spoken.
import { ownValue } from './own-keys.ts';
import type { StateEntry } from './runtime-types.ts';
import type { FlowVariables } from './runtime-variables.ts';
import { renderTemplate } from './template.ts';
import type { FlowDocument } from './types.ts';

/** Applies the state's `on_enter.set` and says what else entering it asks for. */
export function enterState(document: FlowDocument, stateName: string, variables: FlowVariables): StateEntry {
  const state = ownValue(document.states, stateName);
  const onEnter = state?.on_enter;
  // Rendered with the variables as they were before this entry's own `set`, so the order of
  // its keys does not matter.
  const before = variables.current;
  for (const [variable, value] of Object.entries(onEnter?.set ?? {})) {
    variables.set(variable, typeof value === 'string' ? renderTemplate(value, before) : value);
  }
  const say = onEnter?.say === undefined ? '' : renderTemplate(onEnter.say, variables.current);
  const endSession = onEnter?.end_session === true;
  const transfer = onEnter?.transfer;
  return {
    state: stateName,
    say: say.trim() === '' ? null : say,
    endSession,
    // The call is leaving the flow: the model has nothing more to say to the caller.
    respond: state?.respond !== false && !endSession && transfer === undefined,
    resetContext: state?.context === 'reset',
    interruptible: state?.interruptible !== false,
    ...(transfer
      ? {
          transfer: {
            to: transfer.to,
            mode: transfer.mode ?? 'cold',
            summary: transfer.mode === 'warm' && transfer.summary === true,
            onFailed: transfer.on_failed ?? null,
            ...(transfer.mode === 'warm' && transfer.timeout_seconds !== undefined ? { timeoutSeconds: transfer.timeout_seconds } : {}),
          },
        }
      : {}),
  };
}
