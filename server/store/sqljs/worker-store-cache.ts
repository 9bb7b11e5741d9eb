// The two reads nearly every API request makes, kept on the server's side of the store worker
// (worker-store.ts): the API key a request carries, and an account's flow list. In one thread
// the sql.js repositories answered these from caches of their own within the same turn; from a
// worker each costs a round trip of messages, and `GET /v1/flows` with an API key fell from 0.60–
// 0.76 of a bare Fastify route to 0.29–0.32 (`npm run bench -- api` and `-- postgres`, quiet).
//
// Correct because this process is the only writer of its data dir (the lock), and every write
// goes through this proxy: a write to a repository a cache reads from clears that cache when the
// write is sent, before the worker runs it. A read sent before such a write may answer with what
// it saw before it; its answer is then not kept (a generation count says so), so a cleared cache
// is never refilled with the old value. A worker that is gone serves nothing from here either.
import { TOUCH_INTERVAL_SECS, type ApiKey, type ApiKeysRepository } from '../repositories/api-keys.ts';
import type { FlowSummary, FlowsRepository } from '../repositories/flows.ts';
import type { FlowVersionsRepository } from '../repositories/flow-versions.ts';

/** Entries kept of each cache; the oldest goes first past it. */
const ENTRIES = 1_000;

class ReadCache<V> {
  #generation = 0;
  readonly #entries = new Map<string, V>();

  constructor(private readonly usable: () => boolean) {}

  clear(): void {
    this.#generation++;
    this.#entries.clear();
  }

  async read(key: string, fetch: () => Promise<V>, copy: (value: V) => V): Promise<V> {
    if (!this.usable()) return fetch();
    const hit = this.#entries.get(key);
    if (hit !== undefined) return copy(hit);
    const generation = this.#generation;
    const value = await fetch();
    if (generation === this.#generation && this.usable()) {
      this.#entries.set(key, value);
      if (this.#entries.size > ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
    }
    return copy(value);
  }

  /** Changes every kept value in place (an API key's last use). */
  update(change: (value: V) => V): void {
    for (const [key, value] of this.#entries) this.#entries.set(key, change(value));
  }
}

/** Every method of `repository` but `reads` clears `cache` as it is called. */
function clearingOnWrites<R extends object>(repository: R, reads: ReadonlyArray<keyof R>, caches: Array<ReadCache<unknown>>): R {
  const out: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(repository)) {
    if (typeof method !== 'function' || reads.includes(name as keyof R)) {
      out[name] = method;
      continue;
    }
    out[name] = (...args: unknown[]) => {
      for (const cache of caches) cache.clear();
      return (method as (...a: unknown[]) => unknown)(...args);
    };
  }
  return out as R;
}

export interface HotReads {
  apiKeys: ApiKeysRepository;
  flows: FlowsRepository;
  flowVersions: FlowVersionsRepository;
}

/** The repositories of `remote` with their hot reads answered here when they can be. */
export function cacheHotReads(remote: HotReads, usable: () => boolean): HotReads {
  const keys = new ReadCache<ApiKey | null>(usable);
  const lists = new ReadCache<FlowSummary[]>(usable);
  /** When each key's use was last sent, so most touches send nothing (the repository throttles the same way). */
  const touched = new Map<string, number>();

  const apiKeys: ApiKeysRepository = {
    ...clearingOnWrites(remote.apiKeys, ['listByAccount', 'findActiveByHash', 'touch'], [keys as ReadCache<unknown>]),
    findActiveByHash: (keyHash) => keys.read(keyHash, () => remote.apiKeys.findActiveByHash(keyHash), (key) => (key ? { ...key } : null)),
    async touch(id, now) {
      const last = touched.get(id);
      if (last !== undefined && now - last < TOUCH_INTERVAL_SECS) return false;
      touched.set(id, now);
      if (touched.size > ENTRIES) touched.delete(touched.keys().next().value!);
      const recorded = await remote.apiKeys.touch(id, now);
      if (recorded) keys.update((key) => (key?.id === id ? { ...key, lastUsedAt: now } : key));
      return recorded;
    },
  };

  const flowReads: Array<keyof FlowsRepository> = ['list', 'get', 'exists'];
  const flows: FlowsRepository = {
    ...clearingOnWrites(remote.flows, flowReads, [lists as ReadCache<unknown>]),
    list: (accountId) => lists.read(accountId, () => remote.flows.list(accountId), (list) => list.map((flow) => ({ ...flow }))),
  };
  const flowVersions = clearingOnWrites(remote.flowVersions, ['list', 'get', 'getDraft', 'currentEtag'], [lists as ReadCache<unknown>]);
  return { apiKeys, flows, flowVersions };
}
