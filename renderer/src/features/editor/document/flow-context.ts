// The open flow's data for the parts deep inside the editor that read the whole flow rather than
// their own piece of it (an http tool's "Save as test" walks from the start state to its state).
// The workspace provides it; outside one there is none.
import { getContext, setContext } from 'svelte';
import type { FlowData } from '../../../../../server/flow/graph/flow-data.ts';

const KEY = Symbol('flow-data');

/** Called by the editor's workspace: `read` gives the flow's data as it is now. */
export function provideFlowData(read: () => FlowData | null): void {
  setContext(KEY, read);
}

/** The flow's data as it is now, or null outside an editor (or before the flow is read). */
export function currentFlowData(): () => FlowData | null {
  return getContext<(() => FlowData | null) | undefined>(KEY) ?? (() => null);
}
