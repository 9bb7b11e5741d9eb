// One undo history for the whole editor: graph edits, inspector edits, YAML typing and node moves
// are all snapshots of the same thing (the YAML text and the positions), so Ctrl+Z undoes the
// last change wherever it was made. CodeMirror's own history is left out so the two cannot
// disagree about what "the last change" was.
//
// Typing would otherwise make one entry per keystroke: changes recorded with the same key within
// `coalesceMs` of the previous one replace it instead (a burst of typing in the YAML, or in one
// inspector field, undoes as one step).

export interface HistoryOptions {
  /** Entries kept behind the present; the oldest are dropped. */
  limit?: number;
  coalesceMs?: number;
}

export class EditHistory<T> {
  private past: T[] = [];
  private future: T[] = [];
  private lastKey: string | null = null;
  private lastAt = -Infinity;
  private readonly limit: number;
  private readonly coalesceMs: number;

  constructor(
    private presentEntry: T,
    options: HistoryOptions = {},
    private readonly same: (a: T, b: T) => boolean = Object.is,
  ) {
    this.limit = options.limit ?? 200;
    this.coalesceMs = options.coalesceMs ?? 1000;
  }

  get present(): T {
    return this.presentEntry;
  }
  get canUndo(): boolean {
    return this.past.length > 0;
  }
  get canRedo(): boolean {
    return this.future.length > 0;
  }

  /**
   * A new present. With a `key` equal to the previous record's, soon after it, the previous
   * entry is replaced rather than kept (typing). Returns false when nothing changed.
   */
  record(entry: T, key: string | null = null, now: number = Date.now()): boolean {
    if (this.same(entry, this.presentEntry)) return false;
    const coalesce = key !== null && key === this.lastKey && now - this.lastAt <= this.coalesceMs && this.future.length === 0;
    if (!coalesce) {
      this.past.push(this.presentEntry);
      if (this.past.length > this.limit) this.past.shift();
    }
    this.presentEntry = entry;
    this.future = [];
    this.lastKey = key;
    this.lastAt = now;
    return true;
  }

  /**
   * Changes the present without making an undo step: what follows from it automatically (a new
   * state placed on the canvas after a YAML edit) undoes together with it.
   */
  amend(entry: T): void {
    this.presentEntry = entry;
  }

  undo(): T | null {
    const previous = this.past.pop();
    if (previous === undefined) return null;
    this.future.push(this.presentEntry);
    this.presentEntry = previous;
    this.lastKey = null;
    return previous;
  }

  redo(): T | null {
    const next = this.future.pop();
    if (next === undefined) return null;
    this.past.push(this.presentEntry);
    this.presentEntry = next;
    this.lastKey = null;
    return next;
  }

  /** Forgets everything: a freshly loaded flow starts a new history. */
  reset(entry: T): void {
    this.past = [];
    this.future = [];
    this.presentEntry = entry;
    this.lastKey = null;
  }

  /** Ends coalescing: the next record is its own step even with the same key. */
  seal(): void {
    this.lastKey = null;
  }
}
