// The edit of a state's turn-taking (`turn`, docs/flows.md#turn-taking), made by the inspector's
// Turn-taking section. Same rules as operations.ts: pure, never throws, changes only what it must,
// and a key set back to "the flow's or server's" (null) is removed, the `turn` map with its last key.
import type { FlowData, TurnView } from '../../../../../server/flow/graph/flow-data.ts';
import { child, draft, stateIn } from './operations.ts';

const KEYS: Record<keyof TurnView, string> = {
  minInterruptionWords: 'min_interruption_words',
  backchannels: 'backchannels',
  endpointingMs: 'endpointing_ms',
  maxEndpointingMs: 'max_endpointing_ms',
};

/** Sets the keys the patch names; a field left out is kept, null removes its key. */
export function setStateTurn(data: FlowData, stateName: string, patch: Partial<TurnView>): FlowData {
  const next = draft(data);
  const state = stateIn(next, stateName);
  if (!state) return data;
  const turn = child(state, 'turn');
  for (const [field, key] of Object.entries(KEYS) as Array<[keyof TurnView, string]>) {
    if (!(field in patch)) continue;
    const value = patch[field];
    if (value === null || value === undefined) delete turn[key];
    else turn[key] = value;
  }
  if (Object.keys(turn).length === 0) delete state.turn;
  return next;
}
