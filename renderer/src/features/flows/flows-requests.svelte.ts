// Requests for the flows screen from outside it: the desktop menu's "New flow…" and "Open
// YAML…" arrive at the app frame, which goes to the flows screen and leaves the request here;
// the screen takes it once it is showing (it may have to mount first).
export type FlowsRequest = 'new-flow' | 'import';

export const flowsRequests = $state<{ pending: FlowsRequest | null }>({ pending: null });

export function requestOnFlows(request: FlowsRequest): void {
  flowsRequests.pending = request;
}

/** The pending request, cleared so it is handled once. */
export function takeFlowsRequest(): FlowsRequest | null {
  const pending = flowsRequests.pending;
  flowsRequests.pending = null;
  return pending;
}
