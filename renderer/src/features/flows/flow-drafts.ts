// Flows that exist only in the studio until they are saved: a YAML file with errors, imported to
// be fixed in the editor (the server refuses a flow with errors, so it cannot be created first).
// Kept in sessionStorage, per tab, so a reload of the editor keeps the draft; saving it creates
// the flow and drops the draft.

export interface FlowDraft {
  name: string;
  yaml: string;
}

const PREFIX = 'voxflow.draft.';

/** Keeps a draft; returns its id (for /flow-editor?draft=ID). */
export function keepDraft(draft: FlowDraft): string {
  const id = Math.random().toString(36).slice(2, 10);
  sessionStorage.setItem(PREFIX + id, JSON.stringify(draft));
  return id;
}

export function readDraft(id: string): FlowDraft | null {
  try {
    const value = JSON.parse(sessionStorage.getItem(PREFIX + id) ?? 'null') as FlowDraft | null;
    return value && typeof value.name === 'string' && typeof value.yaml === 'string' ? value : null;
  } catch {
    return null;
  }
}

export function dropDraft(id: string): void {
  sessionStorage.removeItem(PREFIX + id);
}
