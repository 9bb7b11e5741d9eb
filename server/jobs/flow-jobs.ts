// Over 400 lines, one idea: the pool that keeps flow work off the thread that paces audio (its
// places per account, budgets, worker replacement, and the jobs it runs, bodies read there too),
// kept together since each job's answer depends on the pool's rules.
//
// The flow-job pool (so one tenant never holds up another's calls): parsing and validating flows
// and the YAML⇄JSON edits run in worker threads, never on the thread that paces every session's
// audio. A 255 KiB upload took that thread 1.6–2.9 s before.
//
// - Each job has a budget of CPU time (VOXFLOW_FLOW_JOB_BUDGET_MS, 5 s by default). Past it, its
//   worker is terminated (a synchronous parse cannot be interrupted otherwise) and replaced on
//   demand, and the request gets 422 flow_too_complex. CPU time rather than wall time, so that the
//   answer depends on the document alone: a machine busy with calls answers later, but does not
//   refuse documents it would take on a quiet one. Read from Linux's per-thread counters; wall time
//   elsewhere.
// - One account has at most FLOW_JOBS_PER_ACCOUNT jobs queued or running; past that its next
//   request gets 429 rate_limited with Retry-After, so one account can hold at most that many
//   places in a line every account shares (first come, first served). The line itself holds
//   at most `maxWaiting` jobs (503 at_capacity past it).
// - Workers start on first use and stop after a minute without work. While calls are live, a job
//   runs below the priority of the thread that paces their audio (nice 10, flow-worker.ts); with
//   no call live there is nothing to yield to, and a job at nice 10 would only yield to every
//   other busy process on the machine (beside a second test suite, a 1,767-state edit took over
//   three minutes that way, against seconds at the process's priority). A flow's view for the
//   studio's canvas always runs there: it is a head start, and in the desktop app the studio's
//   own flow worker parses the same text on the same cores at that moment; made at the same
//   priority, it slowed an open the view was not ready for by a quarter (the first open of a
//   flow, docs/benchmarks.md).
//
// node:worker_threads rather than piscina: the budget is the CPU time of the thread that runs
// the job, and piscina does not say which of its workers (so which thread) runs a task, so it
// could only abort on wall time; the admission per account would be ours either way, and the
// pool is the same shape as flite's (providers/tts/flite.ts), with no dependency to ship.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { AppError } from '../errors.ts';
import type { Diagnostic, FlowDocument } from '../flow/types.ts';
import type { FlowJob, FlowJobResults } from './flow-job.ts';

/** Jobs one account may have queued or running at once. */
export const FLOW_JOBS_PER_ACCOUNT = 2;
/** Jobs waiting for a worker, all accounts together, by default. */
const MAX_WAITING = 256;
const IDLE_WORKER_MS = 60_000;
/** Heap a worker may use: a 256 KiB document needs a few tens of MiB. */
const WORKER_HEAP_MB = 512;

/** Workers for this machine: one per core the main thread can spare, 1 to 4. */
export function defaultFlowWorkers(): number {
  return Math.min(4, Math.max(1, availableParallelism() - 1));
}

export interface FlowJobsOptions {
  /** Worker threads at most; defaultFlowWorkers() when unset. */
  workers?: number;
  /** CPU time one job may take, in milliseconds. */
  budgetMs: number;
  /** Jobs one account may have queued or running; FLOW_JOBS_PER_ACCOUNT when unset. */
  perAccount?: number;
  /** Jobs that may wait for a worker; past that, 503. */
  maxWaiting?: number;
  /** Whether calls are live: a job then yields the CPU to the thread that paces their audio. */
  callsLive?: () => boolean;
}

type Kind = FlowJob['kind'];

interface Pending {
  id: number;
  account: string;
  job: FlowJob;
  resolve: (result: never) => void;
  reject: (error: unknown) => void;
}

interface Running {
  pending: Pending;
  startCpuMs: number | null;
  startedAt: number;
  timer: NodeJS.Timeout;
}

interface Slot {
  worker: Worker;
  /** The worker's Linux thread id, for its CPU time; null until ready, or where unknown. */
  tid: number | null;
  ready: boolean;
  running: Running | null;
  idleTimer: NodeJS.Timeout | null;
}

type WorkerMessage =
  | { type: 'ready'; tid: number | null }
  | { type: 'done'; id: number; result: unknown }
  | { type: 'failed'; id: number; message: string };

// From the sources (tsx, vitest) this file is TypeScript, and the worker starts through tsx; the
// bundles (scripts/build-server.mjs, build-electron.mjs) build the worker as flow-worker.mjs
// beside the module that holds this code. The names stay in constants: build-electron.mjs copies
// every file a source names as a literal relative URL, and neither of these is such a file.
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER_FILE = FROM_SOURCE ? './flow-worker-from-source.mjs' : './flow-worker.mjs';

/** CPU time a thread of this process has used, in ms; null where Linux's counters are not readable. */
function threadCpuMs(tid: number | null): number | null {
  if (tid === null) return null;
  try {
    return Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
}

export class FlowJobs {
  readonly size: number;
  readonly budgetMs: number;
  private readonly perAccount: number;
  private readonly maxWaiting: number;
  private readonly callsLive: () => boolean;
  private readonly slots = new Set<Slot>();
  private readonly waiting: Pending[] = [];
  private readonly jobsOf = new Map<string, number>();
  private nextId = 1;
  private closed = false;

  constructor(options: FlowJobsOptions) {
    const { workers = defaultFlowWorkers(), budgetMs, perAccount = FLOW_JOBS_PER_ACCOUNT, maxWaiting = MAX_WAITING, callsLive = () => false } = options;
    if (!Number.isInteger(workers) || workers < 1) throw new RangeError(`a flow-job pool needs at least one worker, not ${workers}`);
    this.size = workers;
    this.budgetMs = budgetMs;
    this.perAccount = perAccount;
    this.maxWaiting = maxWaiting;
    this.callsLive = callsLive;
  }

  /** Jobs waiting for a worker, and jobs running (the metrics' flow-job queue depth). */
  get load(): { queued: number; running: number } {
    let running = 0;
    for (const slot of this.slots) if (slot.running) running++;
    return { queued: this.waiting.length, running };
  }

  /** Every diagnostic of a YAML text. */
  async validate(account: string, yaml: string): Promise<Diagnostic[]> {
    return (await this.run(account, { kind: 'validate', yaml })).diagnostics;
  }

  /** Every diagnostic, and the document's own `version` string when it validates (a new flow version keeps it). */
  inspect(account: string, yaml: string): Promise<FlowJobResults['validate']> {
    return this.run(account, { kind: 'validate', yaml });
  }

  /**
   * The document a session runs, or null when the text has errors. For the engine, which should
   * pass an account key of its own (e.g. `engine:<account id>`), so that an account's uploads
   * never make its own session start wait for a place.
   */
  async parseDocument(account: string, yaml: string): Promise<FlowDocument | null> {
    return (await this.run(account, { kind: 'parse', yaml })).document;
  }

  /** The document as plain data; fails when the YAML has errors (stored flows have none). */
  async toJson(account: string, yaml: string): Promise<unknown> {
    return (await this.run(account, { kind: 'to_json', yaml })).json;
  }

  /** `json` applied onto `yaml` (comments and layout kept), with the result's diagnostics. */
  applyJson(account: string, yaml: string, json: unknown): Promise<FlowJobResults['apply_json']> {
    return this.run(account, { kind: 'apply_json', yaml, json });
  }

  /**
   * applyJson with the JSON still the request body's UTF-8 bytes, decoded and parsed in the
   * worker (json-text.ts); a body that is not a JSON object gets the coded error the main
   * thread's parser would give. The bytes' buffer is transferred to the worker: it is unusable
   * here afterwards.
   */
  async applyJsonText(account: string, yaml: string, body: Uint8Array, maxDepth: number): Promise<FlowJobResults['apply_json'] & { yamlJson: Uint8Array }> {
    const result = await this.run(account, { kind: 'apply_json_text', yaml, body, maxDepth });
    if ('refused' in result) throw new AppError(result.refused.code, result.refused.message, result.refused.details);
    // An edit that changed nothing comes back without its text: it is `yaml`, the very string.
    return { ...result, yaml: result.yaml ?? yaml };
  }

  /** The document's JSON form as UTF-8 bytes (moved here from the worker), to send as they are; fails like toJson. */
  async toJsonBytes(account: string, yaml: string): Promise<Uint8Array> {
    return (await this.run(account, { kind: 'to_json_text', yaml })).jsonText;
  }

  /** The document's JSON form as text; fails like toJson. */
  async toJsonText(account: string, yaml: string): Promise<string> {
    const bytes = await this.toJsonBytes(account, yaml);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  }

  /**
   * A flow test or a suite with its diagnostics, checked against the flow
   * (docs/testing.md#flow-tests), and the flow's document.
   */
  parseTests(account: string, yaml: string, flowYaml: string): Promise<FlowJobResults['parse_tests']> {
    return this.run(account, { kind: 'parse_tests', yaml, flowYaml });
  }

  /** A Pipecat FlowConfig (the request body's JSON, its bytes transferred) as a Voxflow flow, or the body's refusal. */
  async importPipecat(account: string, body: Uint8Array, maxDepth: number): Promise<Exclude<FlowJobResults['pipecat_import'], { refused: unknown }>> {
    const result = await this.run(account, { kind: 'pipecat_import', body, maxDepth });
    if ('refused' in result) throw new AppError(result.refused.code, result.refused.message, result.refused.details);
    return result;
  }

  /**
   * A new flow's request body (its bytes transferred to the worker) read and checked as any
   * body is, and its YAML validated unless larger than `validateUpTo` bytes (see FlowJob
   * 'create_flow'); a body the server's parser or the route's schema would refuse is refused
   * with the same answer.
   */
  async readNewFlow(account: string, body: Uint8Array, maxDepth: number, validateUpTo: number): Promise<Exclude<FlowJobResults['create_flow'], { refused: unknown }>> {
    const result = await this.run(account, { kind: 'create_flow', body, maxDepth, validateUpTo });
    if ('refused' in result) {
      const { code, message, details, closeConnection } = result.refused;
      throw new AppError(code, message, details, closeConnection ? { connection: 'close' } : undefined);
    }
    return result;
  }

  /** A flow's YAML out as a Pipecat FlowConfig (JSON and YAML texts), or its errors. */
  exportPipecat(account: string, yaml: string): Promise<FlowJobResults['pipecat_export']> {
    return this.run(account, { kind: 'pipecat_export', yaml });
  }

  /** A flow's YAML out as the YAML FlowConfig of Pipecat Flows 1.x (its text and parts), or its errors. */
  exportPipecatDeclarative(account: string, yaml: string): Promise<FlowJobResults['pipecat_export_declarative']> {
    return this.run(account, { kind: 'pipecat_export_declarative', yaml });
  }

  /**
   * The studio's canvas for a text and the layout stored with the flow (flow/graph/view.ts), as
   * JSON bytes made in the worker: `head`, the view or null (not readable YAML), `tail`.
   */
  flowView(account: string, yaml: string, layout: string | null, head: string, tail: string): Promise<FlowJobResults['flow_view']> {
    return this.run(account, { kind: 'flow_view', yaml, layout, head, tail });
  }

  /** Fails what waits or runs, and terminates the workers. */
  async close(): Promise<void> {
    this.closed = true;
    const stopped = new Error('the server is shutting down');
    for (const pending of this.waiting.splice(0)) this.settle(pending, { error: stopped });
    const workers = [...this.slots].map((slot) => {
      this.retire(slot);
      if (slot.running) this.settle(slot.running.pending, { error: stopped });
      return slot.worker.terminate();
    });
    await Promise.all(workers);
  }

  private run<K extends Kind>(account: string, job: Extract<FlowJob, { kind: K }>): Promise<FlowJobResults[K]> {
    if (this.closed) return Promise.reject(new AppError('at_capacity', 'The server is shutting down.'));
    const held = this.jobsOf.get(account) ?? 0;
    if (held >= this.perAccount) {
      return Promise.reject(
        new AppError(
          'rate_limited',
          `This account already has ${held} flow documents being processed, the most it may have at once; send the next when one is answered.`,
          undefined,
          { 'retry-after': '1' },
        ),
      );
    }
    if (this.waiting.length >= this.maxWaiting) {
      return Promise.reject(new AppError('at_capacity', 'Too many flow documents are waiting to be processed; try again shortly.', undefined, { 'retry-after': '1' }));
    }
    this.jobsOf.set(account, held + 1);
    return new Promise<FlowJobResults[K]>((resolve, reject) => {
      this.waiting.push({ id: this.nextId++, account, job, resolve: resolve as (result: never) => void, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.waiting.length === 0) return;
      if (slot.ready && !slot.running) this.start(slot, this.waiting.shift()!);
    }
    // Workers for the jobs that no worker, running or starting, will take.
    let starting = 0;
    for (const slot of this.slots) if (!slot.ready) starting++;
    for (let missing = this.waiting.length - starting; missing > 0 && this.slots.size < this.size; missing--) this.spawn();
  }

  private spawn(): void {
    const worker = new Worker(new URL(WORKER_FILE, import.meta.url), {
      // Not the parent's flags: a worker gets tsx from its own entry when it needs it.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
    const slot: Slot = { worker, tid: null, ready: false, running: null, idleTimer: null };
    this.slots.add(slot);
    worker.on('message', (message: WorkerMessage) => this.received(slot, message));
    worker.on('error', (error: Error & { code?: string }) => this.lost(slot, error));
    worker.on('exit', (code) => this.lost(slot, new Error(`the flow worker exited with code ${code}`)));
  }

  private received(slot: Slot, message: WorkerMessage): void {
    if (message.type === 'ready') {
      slot.ready = true;
      slot.tid = message.tid;
      this.dispatch();
      if (!slot.running) this.idle(slot);
      return;
    }
    const running = slot.running;
    if (!running || running.pending.id !== message.id) return;
    clearTimeout(running.timer);
    slot.running = null;
    if (message.type === 'done') this.settle(running.pending, { result: message.result });
    else this.settle(running.pending, { error: new Error(message.message) });
    this.dispatch();
    if (!slot.running) this.idle(slot);
  }

  private start(slot: Slot, pending: Pending): void {
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = null;
    slot.running = {
      pending,
      startCpuMs: threadCpuMs(slot.tid),
      startedAt: performance.now(),
      timer: setTimeout(() => this.checkBudget(slot), this.budgetMs),
    };
    // Only while it works does a worker keep the process alive.
    slot.worker.ref();
    try {
      const lowered = this.callsLive() || pending.job.kind === 'flow_view';
      slot.worker.postMessage({ id: pending.id, job: pending.job, yieldToCalls: lowered }, transferable(pending.job));
    } catch (error) {
      // Data that cannot be cloned (only reachable from code, never from JSON).
      clearTimeout(slot.running.timer);
      slot.running = null;
      this.settle(pending, { error });
      this.idle(slot);
    }
  }

  private checkBudget(slot: Slot): void {
    const running = slot.running;
    if (!running) return;
    const wallMs = performance.now() - running.startedAt;
    const cpuMs = threadCpuMs(slot.tid);
    const usedMs = cpuMs !== null && running.startCpuMs !== null ? cpuMs - running.startCpuMs : wallMs;
    if (usedMs < this.budgetMs) {
      running.timer = setTimeout(() => this.checkBudget(slot), Math.max(10, this.budgetMs - usedMs));
      return;
    }
    this.retire(slot);
    void slot.worker.terminate();
    slot.running = null;
    this.settle(running.pending, { error: tooComplex(this.budgetMs) });
    this.dispatch();
  }

  /** A worker that crashed, exited, or could not start. */
  private lost(slot: Slot, error: Error & { code?: string }): void {
    if (!this.slots.has(slot)) return;
    this.retire(slot);
    const running = slot.running;
    slot.running = null;
    if (running) {
      clearTimeout(running.timer);
      this.settle(running.pending, { error: error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? tooComplex(this.budgetMs) : error });
    }
    if (!slot.ready) {
      // A worker that cannot start would not start the next time either: fail what waits
      // rather than start workers in a loop.
      const cause = new Error(`the flow worker could not start: ${error.message}`, { cause: error });
      for (const pending of this.waiting.splice(0)) this.settle(pending, { error: cause });
      return;
    }
    this.dispatch();
  }

  private idle(slot: Slot): void {
    slot.worker.unref();
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = setTimeout(() => {
      if (slot.running) return;
      this.retire(slot);
      void slot.worker.terminate();
    }, IDLE_WORKER_MS);
    slot.idleTimer.unref();
  }

  /** Forgets a worker, so that its exit is expected. */
  private retire(slot: Slot): void {
    this.slots.delete(slot);
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = null;
    if (slot.running) clearTimeout(slot.running.timer);
  }

  private settle(pending: Pending, outcome: { result: unknown } | { error: unknown }): void {
    const held = (this.jobsOf.get(pending.account) ?? 1) - 1;
    if (held > 0) this.jobsOf.set(pending.account, held);
    else this.jobsOf.delete(pending.account);
    if ('error' in outcome) pending.reject(outcome.error);
    else pending.resolve(outcome.result as never);
  }
}

/**
 * A request body's bytes move to the worker rather than being copied, when they are the whole of
 * their buffer (never a view into one shared with other data, such as Node's pool of small Buffers).
 */
function transferable(job: FlowJob): ArrayBuffer[] {
  if (!('body' in job)) return [];
  const { buffer, byteOffset, byteLength } = job.body;
  return buffer instanceof ArrayBuffer && byteOffset === 0 && byteLength === buffer.byteLength ? [buffer] : [];
}

function tooComplex(budgetMs: number): AppError {
  return new AppError(
    'flow_too_complex',
    `Processing this flow document took more than the ${budgetMs} ms of CPU time (or more memory than) one document may use on this server; make it smaller or simpler: fewer states, keys or placeholders.`,
  );
}
