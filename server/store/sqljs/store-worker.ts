// The embedded store's worker thread (worker-store.ts starts it): sql.js, its journal, fsyncs
// and snapshots run here, so that no SQL statement, record encoding or snapshot export runs on
// the thread that paces every session's audio. It serves each store the process
// opens (a server has one; a test process opens many in turn).
//
// Calls are served in the order they arrive: each starts as its message is read, and a
// repository method does its SQL synchronously before its first await, so a read sent after a
// write sees it (read-your-writes, as in one thread). An answer to a write is sent once the
// write is durable, exactly as the in-process store resolves it, and an answer to a read once
// every write it could have seen is durable.
//
// It runs at the process's priority, not below it as the flow workers do: every request of every
// account waits on it (a session's start, its per-minute debits), and each call is short.
import { writeFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { Store } from '../store.ts';
import type { EmbeddedStore } from './store.ts';
import { StoreClosedError } from '../errors.ts';
import { openStore } from './store.ts';
import { isRemoteMethod, serializeError, type FromWorker, type Probe, type ToWorker } from './worker-protocol.ts';

if (!parentPort) throw new Error('store-worker runs as a worker thread');
// Named, for `top -H` and the benches' CPU per thread: Node names every worker thread "node".
// Linux only; elsewhere the thread keeps its name.
try {
  writeFileSync('/proc/thread-self/comm', 'voxflow-store');
} catch {
  // not Linux, or not permitted
}
const port = parentPort;
const send = (message: FromWorker) => port.postMessage(message);

interface OpenStore {
  store: Promise<EmbeddedStore>;
  /** Calls still running, so that close waits for them. */
  running: Set<Promise<unknown>>;
}

const stores = new Map<number, OpenStore>();

/** Texts shorter than this are sent back even when the call carried them: their copy costs little. */
const ECHO_MIN_LENGTH = 1024;

/**
 * The answer to a call less the long texts the call itself carried in (a flow's new YAML, which
 * flows.create and flows.update answer with): each is sent as null and named with the argument
 * that holds it, for the proxy to put back (worker-store.ts). The thread that paces audio then
 * copies no text of hundreds of KiB it already has.
 */
function withoutEchoes(args: unknown[], value: unknown, leaveOut: string[] = []): { value: unknown; echoed?: Array<[string, number]> } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { value };
  let echoed: Array<[string, number]> | undefined;
  for (const [key, field] of Object.entries(value)) {
    if (typeof field !== 'string' || field.length < ECHO_MIN_LENGTH) continue;
    const arg = leaveOut.includes(key) ? args.length : args.findIndex((a) => typeof a === 'object' && a !== null && !Array.isArray(a) && (a as Record<string, unknown>)[key] === field);
    if (arg >= 0) (echoed ??= []).push([key, arg]);
  }
  if (!echoed) return { value };
  // Nulled rather than left out, so that the fields keep their order.
  const rest: Record<string, unknown> = { ...value };
  for (const [key] of echoed) rest[key] = null;
  return { value: rest, echoed };
}

function answer(id: number, running: Set<Promise<unknown>>, work: () => unknown, args?: unknown[], leaveOut?: string[]): void {
  let settled: Promise<unknown>;
  try {
    settled = Promise.resolve(work());
  } catch (error) {
    settled = Promise.reject(error);
  }
  const done = settled.then(
    (value) => {
      try {
        send(args ? { type: 'answer', id, ...withoutEchoes(args, value, leaveOut) } : { type: 'answer', id, value });
      } catch (error) {
        // A value that cannot be cloned: a bug in a repository, said as its error.
        send({ type: 'refused', id, error: serializeError(error) });
      }
    },
    (error: unknown) => send({ type: 'refused', id, error: serializeError(error) }),
  );
  running.add(done);
  void done.finally(() => running.delete(done));
}

function probe(store: EmbeddedStore, what: Probe): unknown {
  if (what.kind === 'stats') return store.db.stats();
  // Only reads: a statement that changed the image here would bypass the journal.
  if (!/^\s*(SELECT|WITH)\b/i.test(what.sql)) throw new TypeError('a probe runs only SELECT statements');
  return store.db.all(what.sql, what.params);
}

/** The store a message is for; once closed (a call that crossed its close), the store's closed error. */
function storeFor(handle: number): OpenStore {
  const open = stores.get(handle);
  if (!open) throw new StoreClosedError();
  return open;
}

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'open': {
      const handle = message.store;
      const running = new Set<Promise<unknown>>();
      const store = openStore({
        ...message.options,
        onSnapshotError: (error) => send({ type: 'snapshot_failed', store: handle, error: serializeError(error) }),
        onFailure: (error) => send({ type: 'failed', store: handle, error: serializeError(error) }),
      });
      stores.set(handle, { store, running });
      // A store that did not open is forgotten; its open's answer says why.
      store.catch(() => stores.delete(handle));
      answer(message.id, running, async () => {
        await store;
      });
      return;
    }
    case 'call': {
      const { id, repo, method, args, leaveOut } = message;
      const open = stores.get(message.store);
      answer(id, open?.running ?? new Set(), async () => {
        if (!isRemoteMethod(repo, method)) throw new TypeError(`the store has no method ${repo}.${method}`);
        const store = await storeFor(message.store).store;
        const repository = store[repo] as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
        const result = repository[method]!(...args);
        // What the call read is durable before it is answered: a method does its SQL before its
        // first await, so the writes committed by now are all it can have seen. Without this, a
        // client could read a write whose fsync was still in flight (another request's), and a
        // crash would then take back what it was shown (PostgreSQL shows a commit only once it is
        // flushed, too). A write's own answer already waits for its record; this adds at most the
        // fsync in flight to a read. On a failed store reads answer as before: failure is its own
        // answer to writes, and /health says so.
        const seen = store.db.durable().catch(() => {});
        const value = await result;
        await seen;
        return value;
      }, args, leaveOut);
      return;
    }
    case 'tell': {
      void stores.get(message.store)?.store.then((store: Store) => store.flows.forgetList(...message.args));
      return;
    }
    case 'probe': {
      const open = stores.get(message.store);
      answer(message.id, open?.running ?? new Set(), async () => probe(await storeFor(message.store).store, message.probe));
      return;
    }
    case 'close': {
      const open = stores.get(message.store);
      // Every call that arrived before the close ends first; later ones meet a closed store.
      const earlier = [...(open?.running ?? [])];
      answer(message.id, new Set(), async () => {
        await Promise.allSettled(earlier);
        try {
          await (await storeFor(message.store).store).close();
        } finally {
          stores.delete(message.store);
        }
      });
      return;
    }
  }
});
