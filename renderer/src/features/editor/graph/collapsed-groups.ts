// Which groups a designer has collapsed, per flow: a view preference kept in this browser (like
// the side panel's width), never written into the flow. A flow with no key (a session's replay
// of a flow not saved anywhere) keeps it for as long as it is shown.

const PREFIX = 'voxflow.editor.collapsed-groups.';

export function loadCollapsed(key: string | null): Set<string> {
  if (key === null) return new Set();
  try {
    const saved: unknown = JSON.parse(localStorage.getItem(PREFIX + key) ?? '[]');
    return new Set(Array.isArray(saved) ? saved.filter((name): name is string => typeof name === 'string') : []);
  } catch {
    // Not JSON (written by hand, or by something else): as if nothing were collapsed.
    return new Set();
  }
}

export function saveCollapsed(key: string | null, collapsed: ReadonlySet<string>): void {
  if (key === null) return;
  try {
    if (collapsed.size === 0) localStorage.removeItem(PREFIX + key);
    else localStorage.setItem(PREFIX + key, JSON.stringify([...collapsed].sort()));
  } catch {
    // Storage full or refused (a private window): the view still changes, it is just not kept.
  }
}

/** The localStorage key a flow's collapsed groups are kept under (for tests and benches that set them). */
export function collapsedGroupsKey(flowId: string): string {
  return PREFIX + flowId;
}
