// Which groups a designer has collapsed, per flow: a view preference kept in this browser (like
// the side panel's width), never written into the flow. A flow with no key (a session's replay
// of a flow not saved anywhere) keeps it for as long as it is shown.

/** What is used of the browser's localStorage (tests hand in one of their own). */
export interface ViewStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** The localStorage key a flow's collapsed groups are kept under. */
export function collapsedGroupsKey(flowId: string): string {
  return `voxflow.editor.collapsed-groups.${flowId}`;
}

export function loadCollapsed(storage: ViewStorage, flowId: string | null): Set<string> {
  if (flowId === null) return new Set();
  try {
    const saved: unknown = JSON.parse(storage.getItem(collapsedGroupsKey(flowId)) ?? '[]');
    return new Set(Array.isArray(saved) ? saved.filter((name): name is string => typeof name === 'string') : []);
  } catch {
    // Not JSON (written by hand, or by something else): as if nothing were collapsed.
    return new Set();
  }
}

export function saveCollapsed(storage: ViewStorage, flowId: string | null, collapsed: ReadonlySet<string>): void {
  if (flowId === null) return;
  try {
    if (collapsed.size === 0) storage.removeItem(collapsedGroupsKey(flowId));
    else storage.setItem(collapsedGroupsKey(flowId), JSON.stringify([...collapsed].sort()));
  } catch {
    // Storage full or refused (a private window): the view still changes, it is just not kept.
  }
}
