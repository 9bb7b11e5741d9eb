// The embedded store in a worker thread (off the thread that paces audio): sql.js, the journal's record
// encoding, its fsyncs and the snapshots' export run in store-worker.ts; this thread, which
// paces every session's audio, keeps only a proxy Store that posts each repository call and
// resolves with the worker's answer. The server uses it by default (app.ts); openStore
// (./store.ts) still opens the store in the calling thread, for tools and tests that need
// the engine itself.
//
// - One worker, messages in order: the worker runs calls as they arrive, so a read sent after
//   a write sees it, and an acknowledged write is durable, as in one thread.
// - Errors arrive as the classes the store threw, with their fields (worker-protocol.ts).
// - writable() is kept here: the worker says when its store stops accepting writes, before
//   any write is refused for it, so /health agrees with the 503 that follows.
// - close() lets the calls sent before it end, then closes the store in the worker (snapshot,
//   lock released); the thread ends once no store of the process is open (StoreHost).
//
// A worker that dies (a crash, memory exhausted, a WASM abort) is not restarted. Every pending
// and later call fails with StoreWorkerLostError (503 store_unavailable), writable() turns
// false, so /health answers 503 and a load balancer or supervisor takes the node out, and it is
// logged. This is how a failed journal write is already treated (the store refuses writes
// until Voxflow restarts): a thread that died once would likely die again on the same data,
// a restart in a loop would hide it, and whether the writes in flight reached the disk is
// unknown to this side. A restart of the process replays the journal and starts clean.
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ensurePrivateDir } from './durable-files.ts';
import { acquireLock, type HeldLock } from './lockfile.ts';
import { cacheHotReads } from './worker-store-cache.ts';
import { newNodeId } from '../repositories/nodes.ts';
import { startReadsApart } from '../repositories/sessions.ts';
import { StoreClosedError } from '../errors.ts';
import type { Flow, Store } from '../store.ts';
import type { DatabaseStats } from './database.ts';
import type { OpenStoreOptions } from './store.ts';
import {
  REMOTE_METHODS,
  StoreWorkerLostError,
  reviveError,
  type FromWorker,
  type Probe,
  type RepositoryName,
  type ToWorker,
  type WorkerStoreOpenOptions,
} from './worker-protocol.ts';

export { StoreWorkerLostError } from './worker-protocol.ts';

export interface WorkerStoreOptions extends Omit<OpenStoreOptions, 'now' | 'migrations' | 'onFailure' | 'lockHeldByCaller'> {
  /** The worker stopped unexpectedly and every store call now fails; a process warning when unset. */
  onWorkerLost?: (error: Error) => void;
}

/** The embedded store served from a worker thread. */
export interface WorkerEmbeddedStore extends Store {
  readonly kind: 'sqljs';
  /** Rows of a read-only SQL query, run in the worker: for tests and diagnostics (EmbeddedStore.db.all in one thread). */
  rows<Row>(sql: string, params?: Array<string | number | null>): Promise<Row[]>;
  /** The journal's and snapshots' counters (EmbeddedStore.db.stats). */
  stats(): Promise<DatabaseStats>;
  /** The thread the store runs in (the process's stores share it: StoreHost). */
  readonly worker: Worker;
}

// From the sources (tsx, vitest) this file is TypeScript and the worker starts through tsx; the
// bundles build store-worker.ts as store-worker.mjs beside the module holding this code. Names in
// constants, as in jobs/flow-jobs.ts: build-electron.mjs copies the files a source names as a
// literal relative URL, and neither of these is such a file.
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER_FILE = FROM_SOURCE ? './store-worker-from-source.mjs' : './store-worker.mjs';

type WithoutId<M> = M extends unknown ? Omit<M, 'id'> : never;
/** A message that is answered, before the host numbers it. */
type Request = WithoutId<Extract<ToWorker, { id: number }>>;

/** How long the thread stays once no store is open, for the next one to open at once (tests open many). */
const IDLE_THREAD_MS = 10_000;

interface Pending {
  client: StoreClient;
  /** A repository call's arguments, where its answer's echoed texts are (store-worker.ts). */
  args: unknown[] | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * The thread every store of this process is served from. A server opens one store; a test
 * process opens many, one after another, and starting a thread (with tsx from the sources, and
 * sql.js's WASM) costs 0.3–0.6 s on this machine where opening a store costs 20 ms: so the thread
 * is shared, and kept for IDLE_THREAD_MS once the last store closes. It keeps the process alive
 * only while a call waits, as the store's files never did.
 */
class StoreHost {
  readonly worker: Worker;
  readonly #clients = new Set<StoreClient>();
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #ended = false;
  #idleTimer: NodeJS.Timeout | null = null;

  constructor() {
    this.worker = new Worker(new URL(WORKER_FILE, import.meta.url), { execArgv: [] });
    this.worker.on('message', (message: FromWorker) => this.#received(message));
    this.worker.on('error', (error) => this.#gone(error));
    this.worker.on('exit', (code) => this.#gone(new Error(`the store worker exited with code ${code}`)));
    this.worker.unref();
  }

  get ended(): boolean {
    return this.#ended;
  }

  attach(client: StoreClient): void {
    this.#clients.add(client);
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#idleTimer = null;
  }

  detach(client: StoreClient): void {
    this.#clients.delete(client);
    if (this.#clients.size > 0 || this.#ended) return;
    this.#idleTimer = setTimeout(() => {
      if (this.#clients.size > 0) return;
      this.#end();
      void this.worker.terminate();
    }, IDLE_THREAD_MS);
    this.#idleTimer.unref();
  }

  /** `held`: fields of the answer this side has already; the worker leaves them out and they are put back from here. */
  call(client: StoreClient, request: Request, held?: Record<string, unknown>): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      try {
        this.worker.postMessage({ ...request, id, ...(held ? { leaveOut: Object.keys(held) } : {}) } as ToWorker);
      } catch (error) {
        // Arguments that cannot be cloned (a function, say): only reachable from code.
        reject(error);
        return;
      }
      this.#pending.set(id, { client, args: request.type === 'call' ? (held ? [...request.args, held] : request.args) : undefined, resolve, reject });
      if (this.#pending.size === 1) this.worker.ref();
    });
  }

  tell(message: Extract<ToWorker, { type: 'tell' }>): void {
    this.worker.postMessage(message);
  }

  #received(message: FromWorker): void {
    if (message.type === 'answer' || message.type === 'refused') {
      const pending = this.#pending.get(message.id);
      if (!pending) return;
      this.#pending.delete(message.id);
      if (this.#pending.size === 0) this.worker.unref();
      if (message.type === 'answer') pending.resolve(message.echoed ? withEchoes(message.value as Record<string, unknown>, message.echoed, pending.args ?? []) : message.value);
      else pending.reject(reviveError(message.error));
      return;
    }
    for (const client of this.#clients) if (client.handle === message.store) client.heard(message);
  }

  /** Expected from here on: the idle timer ends the thread, or a new one replaces it. */
  #end(): void {
    this.#ended = true;
    if (host === this) host = null;
  }

  #gone(cause: Error): void {
    if (this.#ended) return;
    this.#end();
    const lost = new StoreWorkerLostError(cause);
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const client of this.#clients) client.lost(lost);
    for (const call of pending) call.reject(lost);
  }
}

/** An answer with the texts the worker did not send back put back from the call's own arguments. */
function withEchoes(value: Record<string, unknown>, echoed: Array<[string, number]>, args: unknown[]): Record<string, unknown> {
  for (const [key, arg] of echoed) value[key] = (args[arg] as Record<string, unknown>)[key];
  return value;
}

let host: StoreHost | null = null;
let nextHandle = 1;

/** One store served from the host's thread. */
class StoreClient {
  readonly handle = nextHandle++;
  readonly host: StoreHost;
  #writable = true;
  #lost: StoreWorkerLostError | null = null;
  #closed = false;
  #closing: Promise<void> | null = null;
  #lock: HeldLock | null = null;
  readonly #onSnapshotError: (error: unknown) => void;
  readonly #onWorkerLost: (error: Error) => void;

  constructor(options: WorkerStoreOptions) {
    host ??= new StoreHost();
    this.host = host;
    this.#onSnapshotError = options.onSnapshotError ?? ((error) => process.emitWarning(`Voxflow snapshot failed: ${String(error)}`));
    this.#onWorkerLost = options.onWorkerLost ?? ((error) => process.emitWarning(error.message));
  }

  /** Open, and its worker still there: what it answered may be served again (worker-store-cache.ts). */
  get serving(): boolean {
    return this.#lost === null && !this.#closed;
  }

  writable(): boolean {
    return this.#writable && this.#lost === null;
  }

  /**
   * The lock is taken here, not in the worker: the lockfile module knows which locks naming our
   * pid this process holds only per thread, and a store opened in this thread on the same data
   * dir (voxflow migrate-store, a test) must be refused, not take it over as stale.
   */
  async open(options: WorkerStoreOpenOptions): Promise<void> {
    const dataDir = resolve(options.dataDir);
    await ensurePrivateDir(dataDir);
    this.#lock = await acquireLock(dataDir);
    this.host.attach(this);
    try {
      await this.host.call(this, { type: 'open', store: this.handle, options: { ...options, dataDir } });
    } catch (error) {
      this.#closed = true;
      this.host.detach(this);
      await this.#lock.release();
      throw error;
    }
  }

  call(request: Request, held?: Record<string, unknown>): Promise<unknown> {
    if (this.#lost) return Promise.reject(this.#lost);
    if (this.#closed) return Promise.reject(new StoreClosedError());
    return this.host.call(this, request, held);
  }

  tell(message: Extract<ToWorker, { type: 'tell' }>): void {
    if (!this.#lost && !this.#closed) this.host.tell(message);
  }

  close(): Promise<void> {
    this.#closing ??= this.#closeOnce();
    return this.#closing;
  }

  async #closeOnce(): Promise<void> {
    try {
      // A lost worker has nothing to flush: what it acknowledged is in the journal.
      if (!this.#lost) await this.call({ type: 'close', store: this.handle });
    } finally {
      this.#closed = true;
      this.host.detach(this);
      await this.#lock?.release();
    }
  }

  heard(message: Extract<FromWorker, { store: number }>): void {
    if (message.type === 'failed') this.#writable = false;
    else this.#onSnapshotError(reviveError(message.error));
  }

  lost(error: StoreWorkerLostError): void {
    if (this.#closed || this.#lost) return;
    this.#lost = error;
    // Nothing writes the data dir any more: a store opened next may have it.
    void this.#lock?.release().catch(() => {});
    this.#onWorkerLost(error);
  }
}

export async function openWorkerStore(options: WorkerStoreOptions): Promise<WorkerEmbeddedStore> {
  const { onSnapshotError: _onSnapshotError, onWorkerLost: _onWorkerLost, ...openOptions } = options;
  const nodeId = options.nodeId ?? newNodeId();
  const client = new StoreClient(options);
  await client.open({ ...openOptions, nodeId, lockHeldByCaller: true });
  const store = client.handle;

  const remote = <N extends RepositoryName>(repo: N): Store[N] => {
    const repository: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
    for (const method of Object.keys(REMOTE_METHODS[repo])) repository[method] = (...args) => client.call({ type: 'call', store, repo, method, args });
    return repository as unknown as Store[N];
  };
  const probe = (what: Probe) => client.call({ type: 'probe', store, probe: what });
  const hot = cacheHotReads(
    {
      accounts: remote('accounts'),
      credits: remote('credits'),
      apiKeys: remote('apiKeys'),
      flows: { ...remote('flows'), forgetList: (accountId) => client.tell({ type: 'tell', store, repo: 'flows', method: 'forgetList', args: [accountId] }) },
      flowVersions: remote('flowVersions'),
      providers: remote('providers'),
      experiments: remote('experiments'),
    },
    () => client.serving,
    (accountId, id, changes, held) => client.call({ type: 'call', store, repo: 'flows', method: 'update', args: [accountId, id, changes] }, held) as Promise<Flow | null>,
  );

  return {
    kind: 'sqljs',
    worker: client.host.worker,
    writable: () => client.writable(),
    accounts: hot.accounts,
    apiKeys: hot.apiKeys,
    flows: hot.flows,
    flowVersions: hot.flowVersions,
    flowStorage: remote('flowStorage'),
    flowTests: remote('flowTests'),
    nodes: { ...remote('nodes'), self: nodeId },
    // Its start's reads from what is kept here: no message to the worker while each is kept.
    sessions: { ...remote('sessions'), startReads: startReadsApart(hot) },
    credits: hot.credits,
    providers: hot.providers,
    phoneNumbers: remote('phoneNumbers'),
    doNotCall: remote('doNotCall'),
    warmTransfers: remote('warmTransfers'),
    analyses: remote('analyses'),
    experiments: hot.experiments,
    analytics: remote('analytics'),
    secrets: remote('secrets'),
    timelines: remote('timelines'),
    webhooks: remote('webhooks'),
    rows: <Row>(sql: string, params: Array<string | number | null> = []) => probe({ kind: 'rows', sql, params }) as Promise<Row[]>,
    stats: () => probe({ kind: 'stats' }) as Promise<DatabaseStats>,
    close: () => client.close(),
  };
}
