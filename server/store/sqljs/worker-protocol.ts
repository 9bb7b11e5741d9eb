// What the embedded store's worker thread (store-worker.ts) and its proxy on the main thread
// (worker-store.ts) say to each other: the messages, the repository methods that may be called
// across, and errors turned into plain data and back into the same classes.
//
// Values cross by structured clone. Every repository takes and returns plain data (strings,
// numbers, booleans, null, arrays and plain objects): no Date, Buffer or class instance, so
// what arrives equals what was sent (test/store/worker-store-answers-as-in-process.test.ts).
// Errors are the exception: a clone keeps only an Error's message (and the class of a built-in
// one), so they cross as SerializedError and are rebuilt with their class and fields, for the
// `instanceof` checks of the HTTP layer (409 email_taken, 429 too_many_sessions, 503
// store_unavailable…) and of serve.ts (a locked data dir).

import type { Store } from '../store.ts';
import {
  CarrierCallTakenError,
  EmailTakenError,
  IdempotencyKeyReusedError,
  PhoneNumberTakenError,
  SessionCapReachedError,
  TestRunSlotTakenError,
  StoreClosedError,
  StoreCorruptError,
  StoreError,
  StoreFailedError,
  StoreLockedError,
  StoreSchemaTooNewError,
  StoreUnreachableError,
} from '../errors.ts';
import type { DatabaseStats } from './database.ts';
import type { OpenStoreOptions } from './store.ts';

/** The store's repositories, by their name on Store. */
export type RepositoryName = Exclude<keyof Store, 'kind' | 'writable' | 'close'>;

type AsyncMethodOf<R> = { [K in keyof R]: R[K] extends (...args: never[]) => Promise<unknown> ? K : never }[keyof R] & string;

/**
 * Every asynchronous method of every repository: what the proxy forwards and the worker agrees
 * to run. Exhaustive by its type: a method added to a repository interface and not here is a
 * type error. The synchronous members are the proxy's own: nodes.self (made on the main side and
 * handed to the worker) and flows.forgetList (told, not asked: it returns nothing).
 */
export const REMOTE_METHODS: { readonly [N in RepositoryName]: { readonly [M in AsyncMethodOf<Store[N]>]: true } } = {
  accounts: { create: true, findByEmail: true, findById: true, signOut: true },
  apiKeys: { create: true, listByAccount: true, findActiveByHash: true, revoke: true, touch: true },
  flows: { create: true, list: true, get: true, exists: true, update: true, delete: true },
  flowVersions: { list: true, get: true, getDraft: true, currentEtag: true, saveDraft: true, discardDraft: true, publish: true },
  flowStorage: { usage: true },
  flowTests: { list: true, get: true, count: true, create: true, update: true, remove: true, startRun: true, finishRun: true, getRun: true, listRuns: true },
  nodes: { beat: true, forgetGone: true },
  sessions: {
    startReads: true,
    create: true,
    createConnected: true,
    findById: true,
    findByTokenHash: true,
    claim: true,
    end: true,
    endInterrupted: true,
    listRecent: true,
    setRecordingFile: true,
    setFlowVersion: true,
    findByCarrierCallId: true,
    setCallStatus: true,
    setCarrierCallId: true,
    setTransferredTo: true,
  setAnsweredBy: true,
    countOutbound: true,
  },
  credits: { grant: true, debit: true, balance: true },
  providers: { get: true, update: true, carrierCredentials: true, updateCarrierCredentials: true },
  phoneNumbers: { create: true, list: true, get: true, findByCarrierNumber: true, delete: true, recordCall: true },
  doNotCall: { add: true, list: true, remove: true, isDoNotCall: true },
  warmTransfers: { create: true, get: true, findByAnswerKey: true, setLegCallId: true, setSummary: true, move: true },
  secrets: { list: true, sealed: true, put: true, delete: true },
  timelines: { append: true, page: true, purgeBefore: true },
  experiments: { create: true, list: true, get: true, running: true, stop: true, results: true },
  analytics: { flowTraffic: true, transitionSessions: true },
  analyses: { open: true, claim: true, complete: true, get: true, successOf: true, outcomesOf: true, unfinished: true },
  webhooks: {
    create: true,
    listByAccount: true,
    find: true,
    subscribers: true,
    remove: true,
    enqueue: true,
    due: true,
    nextDueAt: true,
    pendingCount: true,
    recordAttempt: true,
    listDeliveries: true,
    retryNow: true,
    purgeBefore: true,
    missingEnds: true,
  },
};

export function isRemoteMethod(repo: string, method: string): repo is RepositoryName {
  return Object.hasOwn(REMOTE_METHODS, repo) && Object.hasOwn(REMOTE_METHODS[repo as RepositoryName], method);
}

/** openStore's options that can cross to a thread: its functions (a clock, migrations) cannot. */
export type WorkerStoreOpenOptions = Omit<OpenStoreOptions, 'now' | 'migrations' | 'onSnapshotError' | 'onFailure' | 'lockHeldByCaller'> & {
  nodeId: string;
  /** The main thread holds the data dir's lock (worker-store.ts). */
  lockHeldByCaller: true;
};

/** Read-only looks at the engine, for tests and diagnostics (EmbeddedStore.db in this process). */
export type Probe = { kind: 'rows'; sql: string; params: Array<string | number | null> } | { kind: 'stats' };

/** Every message names the store it is for: a process's stores share one thread (worker-store.ts). */
export type ToWorker =
  | { type: 'open'; id: number; store: number; options: WorkerStoreOpenOptions }
  /**
   * `leaveOut`: fields of the answer the proxy already holds (a flow's text, kept beside the
   * worker): sent back as null and named in `echoed` with the index args.length.
   */
  | { type: 'call'; id: number; store: number; repo: RepositoryName; method: string; args: unknown[]; leaveOut?: string[] }
  /** A synchronous member's call (flows.forgetList): no answer. */
  | { type: 'tell'; store: number; repo: 'flows'; method: 'forgetList'; args: [string] }
  | { type: 'probe'; id: number; store: number; probe: Probe }
  | { type: 'close'; id: number; store: number };

export type FromWorker =
  /**
   * `echoed`: the value's fields sent as null because the call's arguments hold them, each with
   * the index of the argument (an object) whose same-named field it is (store-worker.ts); the
   * index args.length for a field the call asked to leave out.
   */
  | { type: 'answer'; id: number; value: unknown; echoed?: Array<[string, number]> }
  | { type: 'refused'; id: number; error: SerializedError }
  /** The store stopped accepting writes; sent before any write is refused for it. */
  | { type: 'failed'; store: number; error: SerializedError }
  | { type: 'snapshot_failed'; store: number; error: SerializedError };

export type ProbeAnswer = unknown[] | DatabaseStats;

export interface SerializedError {
  name: string;
  message: string;
  stack: string | undefined;
  /** Own enumerable fields: a StoreError's code and its own (pid, limit, idempotencyKey…), a Node error's code, errno, syscall. */
  fields: Record<string, unknown>;
  cause: SerializedError | undefined;
}

export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), stack: undefined, fields: {}, cause: undefined };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
  }
  return { name: error.name, message: error.message, stack: error.stack, fields, cause: error.cause === undefined ? undefined : serializeError(error.cause) };
}

/** The classes an error is rebuilt as, by name; any other arrives as a plain Error with its fields. */
const ERROR_CLASSES: Record<string, { prototype: Error }> = {
  StoreError,
  StoreLockedError,
  StoreCorruptError,
  StoreFailedError,
  StoreClosedError,
  StoreSchemaTooNewError,
  StoreUnreachableError,
  EmailTakenError,
  IdempotencyKeyReusedError,
  SessionCapReachedError,
  TestRunSlotTakenError,
  PhoneNumberTakenError,
  CarrierCallTakenError,
  RangeError,
  TypeError,
  SyntaxError,
  Error,
};

/** The error as the worker threw it: same class, message, fields and cause; the worker's stack. */
export function reviveError(serialized: SerializedError): Error {
  const prototype = (Object.hasOwn(ERROR_CLASSES, serialized.name) ? ERROR_CLASSES[serialized.name]! : Error).prototype;
  const error = Object.create(prototype) as Error;
  Object.defineProperty(error, 'message', { value: serialized.message, writable: true, configurable: true });
  if (serialized.stack !== undefined) Object.defineProperty(error, 'stack', { value: serialized.stack, writable: true, configurable: true });
  if (serialized.cause !== undefined) Object.defineProperty(error, 'cause', { value: reviveError(serialized.cause), writable: true, configurable: true });
  Object.assign(error, serialized.fields);
  return error;
}

/**
 * The store's worker thread stopped (it crashed, ran out of memory, or was terminated): the
 * store is unavailable as after a failed journal write, so every call gets the API's 503
 * store_unavailable. Whether a write in flight reached the disk is unknown, as then.
 */
export class StoreWorkerLostError extends StoreFailedError {
  constructor(cause: unknown) {
    super(cause);
    const reason = cause instanceof Error ? cause.message : String(cause);
    this.message = `The store's worker thread stopped (${reason}); the store accepts nothing until Voxflow is restarted.`;
  }
}
