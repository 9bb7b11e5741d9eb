// Runs the flow worker's jobs (flow-worker.ts) and answers with promises. Where no Worker can be
// started (a test page without one, a worker script that fails to load), the same functions run
// on the page: slower on big flows, never broken.
import { analyzeFlowText, type Analysis } from './analyze.ts';
import type { StateCard, TransitionLink } from '../graph/graph.ts';
import { layOut, openAnalysed, type LaidOut, type Opened } from '../graph/laid-out.ts';
import type { Positions } from '../graph/layout.ts';
import { spawnFlowWorker } from './spawn-flow-worker.ts';

export type WorkerRequest =
  | { id: number; kind: 'analyze'; text: string }
  | { id: number; kind: 'layout'; cards: StateCard[]; links: TransitionLink[]; initial: string | null }
  | { id: number; kind: 'open'; text: string; saved: Positions };
export type WorkerResponse =
  | { id: number; kind: 'analyze'; analysis: Analysis }
  | { id: number; kind: 'layout'; laidOut: LaidOut }
  | { id: number; kind: 'open'; opened: Opened };

/** A request before it is numbered (Omit over each member of the union). */
type Job = WorkerRequest extends infer R ? (R extends WorkerRequest ? Omit<R, 'id'> : never) : never;

export interface FlowWorker {
  analyze(text: string): Promise<Analysis>;
  layout(cards: StateCard[], links: TransitionLink[], initial: string | null): Promise<LaidOut>;
  /** A flow being opened: its analysis, graph and (when `saved` places none of its states) layout in one job. */
  open(text: string, saved: Positions): Promise<Opened>;
  dispose(): void;
}

/** Runs jobs on `started` (spawnFlowWorker(), started earlier), or on a worker started now. */
export function startFlowWorker(started?: Worker | null): FlowWorker {
  const worker = started === undefined ? spawnFlowWorker() : started;
  if (!worker) return inPage();

  const pending = new Map<number, { resolve: (r: WorkerResponse) => void; reject: (e: Error) => void; request: WorkerRequest }>();
  let nextId = 1;
  let broken = false;
  worker.onmessage = (event: MessageEvent<WorkerResponse>) => {
    const job = pending.get(event.data.id);
    pending.delete(event.data.id);
    job?.resolve(event.data);
  };
  worker.onerror = (event) => {
    // The script failed to load or threw: finish what is waiting on the page and stop using it.
    event.preventDefault();
    broken = true;
    for (const job of pending.values()) job.resolve(runInPage(job.request));
    pending.clear();
  };
  const send = (request: Job): Promise<WorkerResponse> => {
    const full = { ...request, id: nextId++ } as WorkerRequest;
    if (broken) return Promise.resolve(runInPage(full));
    return new Promise((resolve, reject) => {
      pending.set(full.id, { resolve, reject, request: full });
      worker!.postMessage(full);
    });
  };
  return {
    async analyze(text) {
      const response = await send({ kind: 'analyze', text });
      return (response as Extract<WorkerResponse, { kind: 'analyze' }>).analysis;
    },
    async layout(cards, links, initial) {
      // $state proxies cannot be cloned into a worker; the plain copies can.
      const response = await send({ kind: 'layout', cards: plainCopy(cards), links: plainCopy(links), initial });
      return (response as Extract<WorkerResponse, { kind: 'layout' }>).laidOut;
    },
    async open(text, saved) {
      const response = await send({ kind: 'open', text, saved: plainCopy(saved) });
      return (response as Extract<WorkerResponse, { kind: 'open' }>).opened;
    },
    dispose() {
      worker!.terminate();
      for (const job of pending.values()) job.reject(new Error('the flow worker was stopped'));
      pending.clear();
    },
  };
}

function plainCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function runInPage(request: WorkerRequest): WorkerResponse {
  if (request.kind === 'analyze') return { id: request.id, kind: 'analyze', analysis: analyzeFlowText(request.text) };
  if (request.kind === 'open') return { id: request.id, kind: 'open', opened: openAnalysed(analyzeFlowText(request.text), request.saved) };
  return { id: request.id, kind: 'layout', laidOut: layOut(request.cards, request.links, request.initial) };
}

function inPage(): FlowWorker {
  return {
    analyze: async (text) => analyzeFlowText(text),
    layout: async (cards, links, initial) => layOut(cards, links, initial),
    open: async (text, saved) => openAnalysed(analyzeFlowText(text), saved),
    dispose() {},
  };
}
