// Fields that hold typing back before writing it into the flow (DraftField waits for a pause, the
// YAML pane could be mid-transaction) register here, so that saving (Ctrl/Cmd+S, the Save button,
// the desktop menu, test-talk's save before Talk) first writes what was typed a moment ago: the
// flow saved is the flow on screen.
import { getContext, setContext } from 'svelte';

const KEY = Symbol('pending-edits');

export class PendingEdits {
  private readonly flushes = new Set<() => void>();
  /** Saves the draft, what is held back included (set by the workspace); resolves to whether it is saved. */
  save: () => Promise<boolean> = async () => false;

  /** Registers a field's flush; returns the function that removes it. */
  add(flush: () => void): () => void {
    this.flushes.add(flush);
    return () => this.flushes.delete(flush);
  }

  /** Writes every field's pending text into the flow, synchronously. */
  flushAll(): void {
    for (const flush of [...this.flushes]) flush();
  }
}

/** Called by the editor's workspace: the fields inside it register with the returned registry. */
export function providePendingEdits(): PendingEdits {
  return setContext(KEY, new PendingEdits());
}

/** The workspace's registry, or undefined outside one (a field rendered on its own). */
export function pendingEdits(): PendingEdits | undefined {
  return getContext<PendingEdits | undefined>(KEY);
}
