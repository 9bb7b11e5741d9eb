// The reads nearly every API request makes, kept on the server's side of the store worker
// (worker-store.ts): the API key a request carries, and an account's flow list. In one thread
// the sql.js repositories answered these from caches of their own within the same turn; from a
// worker each costs a round trip of messages, and `GET /v1/flows` with an API key fell from 0.60–
// 0.76 of a bare Fastify route to 0.29–0.32 (`npm run bench -- api` and `-- postgres`, quiet).
//
// And the flows themselves, each as the last write or read answered it: a flow's text (up to
// 512 KiB) copied out of the worker is a new string in this thread's heap on every read, and
// deserialising those was the largest share of what a noisy account's uploads and JSON edits
// cost the thread that paces audio (docs/benchmarks.md, isolation). Up to FLOW_CHARS of text
// (the flows in use now: each kept text stays in this heap until it goes). A write that does not
// carry the text answers with the kept one, which the worker then leaves out of its answer.
//
// Correct because this process is the only writer of its data dir (the lock), and every write
// goes through this proxy: a write to a repository a cache reads from clears that cache when the
// write is sent, before the worker runs it. A read sent before such a write may answer with what
// it saw before it; its answer is then not kept (a generation count says so), so a cleared cache
// is never refilled with the old value. A worker that is gone serves nothing from here either.
//
// And the rest of what `POST /v1/sessions` reads besides the balance: whether the flow exists, the
// account's provider settings and the flow's running experiment. Each is written seldom (a flow
// made or deleted, settings saved, an experiment started or stopped), so a session start sends
// the worker two calls (the balance, then the session's row) instead of five; a message each way
// cost both threads more than the SQL did (the profile of eight writers put postMessage at a
// sixth of the main thread's CPU per start).
//
// And the balance, which every session start and every voice connection reads: the ledger is
// written only by credits.grant, credits.debit and accounts.create (the signup grant), so a
// grant or a debit forgets that account's balance as it is sent, and keeps the balance it
// answers (the balance after it) unless another write was sent meanwhile. A live call's minute
// debits its account's balance, not the others', so a busy server still answers most starts
// from here; with it a start sends the worker one call (the session's row) instead of two, and
// each call is a message each way that wakes the other thread.
import { TOUCH_INTERVAL_SECS, type ApiKey, type ApiKeysRepository } from '../repositories/api-keys.ts';
import type { Flow, FlowChanges, FlowSummary, FlowsRepository } from '../repositories/flows.ts';
import type { FlowVersionsRepository } from '../repositories/flow-versions.ts';
import type { Experiment, ExperimentsRepository } from '../repositories/experiments.ts';
import type { ProviderSettings, ProvidersRepository } from '../repositories/providers.ts';
import type { CreditsRepository } from '../repositories/credits.ts';
import type { AccountsRepository } from '../repositories/accounts.ts';

/** Entries kept of each cache; the oldest goes first past it. */
const ENTRIES = 1_000;
/** Characters of flow text kept in all (UTF-16 code units, so about as many bytes for YAML). */
const FLOW_CHARS = 4 * 1024 * 1024;

class ReadCache<V> {
  #generation = 0;
  readonly #entries = new Map<string, V>();
  #weight = 0;

  /** `weigh`: what an entry counts against `budget` (nothing when unset). */
  constructor(
    private readonly usable: () => boolean,
    private readonly weigh: (value: V) => number = () => 0,
    private readonly budget = Infinity,
  ) {}

  /** Counts writes: a value read or written before the last clear is not kept. */
  get generation(): number {
    return this.#generation;
  }

  clear(): void {
    this.#generation++;
    this.#entries.clear();
    this.#weight = 0;
  }

  /** A write to one key's value only: the others stay, but no read in flight is kept (it may be this key's). */
  forget(key: string): void {
    this.#generation++;
    const old = this.#entries.get(key);
    if (old === undefined) return;
    this.#weight -= this.weigh(old);
    this.#entries.delete(key);
  }

  /** The kept value itself (not a copy: not for callers to change), or undefined. */
  peek(key: string): V | undefined {
    return this.usable() ? this.#entries.get(key) : undefined;
  }

  /** Keeps what a write answered, unless another write was sent since `generation` (read as the write was sent). */
  keep(generation: number, key: string, value: V): void {
    if (generation === this.#generation && this.usable()) this.#set(key, value);
  }

  async read(key: string, fetch: () => Promise<V>, copy: (value: V) => V): Promise<V> {
    if (!this.usable()) return fetch();
    const hit = this.#entries.get(key);
    if (hit !== undefined) return copy(hit);
    const generation = this.#generation;
    const value = await fetch();
    this.keep(generation, key, value);
    return copy(value);
  }

  #set(key: string, value: V): void {
    const old = this.#entries.get(key);
    if (old !== undefined) {
      this.#weight -= this.weigh(old);
      this.#entries.delete(key);
    }
    const weight = this.weigh(value);
    if (weight > this.budget) return;
    this.#entries.set(key, value);
    this.#weight += weight;
    while (this.#entries.size > ENTRIES || this.#weight > this.budget) {
      const [oldestKey, oldest] = this.#entries.entries().next().value!;
      this.#entries.delete(oldestKey);
      this.#weight -= this.weigh(oldest);
    }
  }

  /** Changes every kept value in place (an API key's last use; never its weight). */
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
  accounts: AccountsRepository;
  credits: CreditsRepository;
  apiKeys: ApiKeysRepository;
  flows: FlowsRepository;
  flowVersions: FlowVersionsRepository;
  providers: ProvidersRepository;
  experiments: ExperimentsRepository;
}

/** flows.update, its answer's fields in `held` left out by the worker and put back from there. */
export type UpdateHolding = (accountId: string, id: string, changes: FlowChanges, held: { yamlContent: string }) => Promise<Flow | null>;

/** The repositories of `remote` with their hot reads answered here when they can be. */
export function cacheHotReads(remote: HotReads, usable: () => boolean, updateHolding?: UpdateHolding): HotReads {
  const keys = new ReadCache<ApiKey | null>(usable);
  const lists = new ReadCache<FlowSummary[]>(usable);
  /** When each key's use was last sent, so most touches send nothing (the repository throttles the same way). */
  const touched = new Map<string, number>();

  const apiKeys: ApiKeysRepository = {
    ...clearingOnWrites(remote.apiKeys, ['listByAccount', 'findActiveByHash', 'touch'], [keys as ReadCache<unknown>]),
    findActiveByHash: (keyHash) => keys.read(keyHash, () => remote.apiKeys.findActiveByHash(keyHash), (key) => (key ? { ...key } : null)),
    findActiveByHashKept: (keyHash) => keys.peek(keyHash),
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

  const kept = new ReadCache<Flow | null>(usable, (flow) => flow?.yamlContent.length ?? 0, FLOW_CHARS);
  const flowKey = (accountId: string, id: string) => `${accountId}\n${id}`;
  const copyFlow = (flow: Flow | null) => (flow ? { ...flow } : null);
  const present = new ReadCache<boolean>(usable);
  /** A flow's running experiment: deleting the flow deletes its experiments, so flow writes clear it too. */
  const running = new ReadCache<Experiment | null>(usable);
  /** Every write to flows or their versions clears these: a publish changes a flow's text, a draft its hasDraft. */
  const flowCaches = [lists, kept, present, running] as Array<ReadCache<unknown>>;
  const flowReads: Array<keyof FlowsRepository> = ['list', 'get', 'exists'];
  const flowWrites = clearingOnWrites(remote.flows, flowReads, flowCaches);
  const flows: FlowsRepository = {
    ...flowWrites,
    list: (accountId) => lists.read(accountId, () => remote.flows.list(accountId), (list) => list.map((flow) => ({ ...flow }))),
    get: (accountId, id) => kept.read(flowKey(accountId, id), () => remote.flows.get(accountId, id), copyFlow),
    exists: (accountId, id) => present.read(flowKey(accountId, id), () => remote.flows.exists(accountId, id), (found) => found),
    // A write's answer is the flow as a read after it would give it: kept for that read (the
    // JSON view the studio asks for next), unless another write was sent meanwhile.
    async create(input) {
      const written = flowWrites.create(input);
      const generation = kept.generation;
      const flow = await written;
      kept.keep(generation, flowKey(flow.accountId, flow.id), flow);
      return { ...flow };
    },
    async update(accountId, id, changes) {
      // A write that leaves the text as it is (a rename, a save of what was read) answers with
      // the text kept here: the worker need not send it back (nothing changed it since it was
      // kept, or it would not be kept).
      const text = changes.yamlContent === undefined ? kept.peek(flowKey(accountId, id))?.yamlContent : undefined;
      let written: Promise<Flow | null>;
      if (text !== undefined && updateHolding) {
        for (const cache of flowCaches) cache.clear();
        written = updateHolding(accountId, id, changes, { yamlContent: text });
      } else {
        written = flowWrites.update(accountId, id, changes);
      }
      const generation = kept.generation;
      const flow = await written;
      if (flow) kept.keep(generation, flowKey(accountId, id), flow);
      return copyFlow(flow);
    },
  };
  const flowVersions = clearingOnWrites(remote.flowVersions, ['list', 'get', 'getDraft', 'currentEtag'], flowCaches);

  const settings = new ReadCache<ProviderSettings>(usable);
  const providers: ProvidersRepository = {
    ...clearingOnWrites(remote.providers, ['get', 'carrierCredentials'], [settings as ReadCache<unknown>]),
    get: (accountId) => settings.read(accountId, () => remote.providers.get(accountId), (kept) => ({ ...kept })),
  };
  const experiments: ExperimentsRepository = {
    ...clearingOnWrites(remote.experiments, ['list', 'get', 'running', 'results'], [running as ReadCache<unknown>]),
    running: (accountId, flowId) =>
      running.read(flowKey(accountId, flowId), () => remote.experiments.running(accountId, flowId), (kept) => (kept ? structuredClone(kept) : null)),
  };

  const balances = new ReadCache<number>(usable);
  /** A ledger write of `accountId`, sent: its answer's balance is kept unless another write was sent since. */
  const ledgerWrite = async <T extends { balance: number }>(accountId: string, send: () => Promise<T>): Promise<T> => {
    balances.forget(accountId);
    const written = send();
    const generation = balances.generation;
    const result = await written;
    balances.keep(generation, accountId, result.balance);
    return result;
  };
  const credits: CreditsRepository = {
    grant: (accountId, cents, reason, idempotencyKey) => ledgerWrite(accountId, () => remote.credits.grant(accountId, cents, reason, idempotencyKey)),
    debit: (accountId, cents, options) => ledgerWrite(accountId, () => remote.credits.debit(accountId, cents, options)),
    balance: (accountId) => balances.read(accountId, () => remote.credits.balance(accountId), (balance) => balance),
  };
  // A new account's signup grant: its id is new, but no balance read before it is kept either.
  const accounts = clearingOnWrites(remote.accounts, ['findByEmail', 'findById', 'signOut'], [balances as ReadCache<unknown>]);
  return { accounts, credits, apiKeys, flows, flowVersions, providers, experiments };
}
