// Keys for {#each}/{#key} blocks over things the designer can rename (states, tools,
// parameters). Keyed by name, a rename would destroy the block being typed in and drop the focus
// to the page; with these keys a renamed thing keeps its key, so its block (and the focus in it)
// stays.
export class StableKeys {
  private readonly keys = new Map<string, number>();
  private next = 0;

  /** The key of `name`, the same on every call until it is renamed away. */
  of(name: string): number {
    let key = this.keys.get(name);
    if (key === undefined) this.keys.set(name, (key = ++this.next));
    return key;
  }

  /** `to` takes over the key of `from`. */
  rename(from: string, to: string): void {
    this.keys.set(to, this.of(from));
    this.keys.delete(from);
  }
}
