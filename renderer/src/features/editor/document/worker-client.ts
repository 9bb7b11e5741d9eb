// Runs the flow worker's jobs (flow-worker.ts) and answers with promises. Where no Worker can be
// started (a test page without one, a worker script that fails to load), the same functions run
// on the page: slower on big flows, never broken.
import { AnalysisUnpacker, type AnalysisMessage } from './analysis-delta.ts';
import { analyzeFlowText, type Analysis } from '../../../../../server/flow/graph/analyze.ts';
import type { StateCard, TransitionLink } from '../../../../../server/flow/graph/graph.ts';
import { layOut, openAnalysed, routeAnalysed, type LaidOut, type Opened } from '../../../../../server/flow/graph/laid-out.ts';
import type { EdgePath } from '../../../../../server/flow/graph/edge-routes.ts';
import type { Positions } from '../../../../../server/flow/graph/layout.ts';
import { spawnFlowWorker } from './spawn-flow-worker.ts';

export type WorkerRequest =
  | { id: number; kind: 'analyze'; text: string; positions: Positions | null }
  | { id: number; kind: 'layout'; cards: StateCard[]; links: TransitionLink[]; initial: string | null }
  | { id: number; kind: 'open'; text: string; saved: Positions }
  /** A flow being opened whose canvas is drawn already (the server's view): its analysis alone. */
  | { id: number; kind: 'open_drawn'; text: string };
/** What the worker posts: analyses as what changed since the last one (analysis-delta.ts). */
export type WorkerResponse =
  | { id: number; kind: 'analyze'; analysis: AnalysisMessage; paths: Map<string, EdgePath> | null }
  | { id: number; kind: 'layout'; laidOut: LaidOut }
  | { id: number; kind: 'open'; opened: Omit<Opened, 'analysis'> & { analysis: AnalysisMessage } }
  | { id: number; kind: 'open_drawn'; analysis: AnalysisMessage };
/** A job's answer as the page uses it. */
type Answer =
  | { id: number; kind: 'analyze'; analysis: Analysis; paths: Map<string, EdgePath> | null }
  | { id: number; kind: 'layout'; laidOut: LaidOut }
  | { id: number; kind: 'open'; opened: Opened }
  | { id: number; kind: 'open_drawn'; analysis: Analysis };

/** A request before it is numbered (Omit over each member of the union). */
type Job = WorkerRequest extends infer R ? (R extends WorkerRequest ? Omit<R, 'id'> : never) : never;

export interface FlowWorker {
  analyze(text: string): Promise<Analysis>;
  /** An edit's analysis, and where its graph's edges run on `positions` when they place exactly its states (else null). */
  analyzeAndRoute(text: string, positions: Positions): Promise<{ analysis: Analysis; paths: Map<string, EdgePath> | null }>;
  layout(cards: StateCard[], links: TransitionLink[], initial: string | null): Promise<LaidOut>;
  /** A flow being opened: its analysis, graph and (when `saved` places none of its states) layout in one job. */
  open(text: string, saved: Positions): Promise<Opened>;
  /**
   * A flow being opened whose canvas is drawn from the server's view (the same graph, positions
   * and routes the open job would give): only its analysis comes back, nothing to lay out, route
   * or read back but that.
   */
  openDrawn(text: string): Promise<Analysis>;
  dispose(): void;
}

/** Runs jobs on `started` (spawnFlowWorker(), started earlier), or on a worker started now. */
export function startFlowWorker(started?: Worker | null): FlowWorker {
  const worker = started === undefined ? spawnFlowWorker() : started;
  if (!worker) return inPage();

  const pending = new Map<number, { resolve: (r: Answer) => void; reject: (e: Error) => void; request: WorkerRequest }>();
  let nextId = 1;
  let broken = false;
  // Unpacked here, as each message comes, so every analysis is rebuilt on the one before it.
  const unpacker = new AnalysisUnpacker();
  worker.onmessage = (event: MessageEvent<WorkerResponse>) => {
    const response = event.data;
    const job = pending.get(response.id);
    pending.delete(response.id);
    if (!job) return;
    const text = job.request.kind === 'layout' ? '' : job.request.text;
    if (response.kind === 'analyze' || response.kind === 'open_drawn') job.resolve({ ...response, analysis: unpacker.unpack(response.analysis, text) } as Answer);
    else if (response.kind === 'open') job.resolve({ ...response, opened: { ...response.opened, analysis: unpacker.unpack(response.opened.analysis, text) } });
    else job.resolve(response);
  };
  worker.onerror = (event) => {
    // The script failed to load or threw: finish what is waiting on the page and stop using it.
    event.preventDefault();
    broken = true;
    for (const job of pending.values()) job.resolve(runInPage(job.request));
    pending.clear();
  };
  const send = (request: Job): Promise<Answer> => {
    const full = { ...request, id: nextId++ } as WorkerRequest;
    if (broken) return Promise.resolve(runInPage(full));
    return new Promise((resolve, reject) => {
      pending.set(full.id, { resolve, reject, request: full });
      worker!.postMessage(full);
    });
  };
  return {
    async analyze(text) {
      const response = await send({ kind: 'analyze', text, positions: null });
      return (response as Extract<Answer, { kind: 'analyze' }>).analysis;
    },
    async analyzeAndRoute(text, positions) {
      const { analysis, paths } = (await send({ kind: 'analyze', text, positions: plainCopy(positions) })) as Extract<Answer, { kind: 'analyze' }>;
      return { analysis, paths };
    },
    async layout(cards, links, initial) {
      // $state proxies cannot be cloned into a worker; the plain copies can.
      const response = await send({ kind: 'layout', cards: plainCopy(cards), links: plainCopy(links), initial });
      return (response as Extract<Answer, { kind: 'layout' }>).laidOut;
    },
    async open(text, saved) {
      const response = await send({ kind: 'open', text, saved: plainCopy(saved) });
      return (response as Extract<Answer, { kind: 'open' }>).opened;
    },
    async openDrawn(text) {
      const response = await send({ kind: 'open_drawn', text });
      return (response as Extract<Answer, { kind: 'open_drawn' }>).analysis;
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

function runInPage(request: WorkerRequest): Answer {
  if (request.kind === 'analyze') {
    const analysis = analyzeFlowText(request.text);
    return { id: request.id, kind: 'analyze', analysis, paths: routeAnalysed(analysis, request.positions).paths };
  }
  if (request.kind === 'open') return { id: request.id, kind: 'open', opened: openAnalysed(analyzeFlowText(request.text), request.saved) };
  if (request.kind === 'open_drawn') return { id: request.id, kind: 'open_drawn', analysis: analyzeFlowText(request.text) };
  return { id: request.id, kind: 'layout', laidOut: layOut(request.cards, request.links, request.initial) };
}

function inPage(): FlowWorker {
  return {
    analyze: async (text) => analyzeFlowText(text),
    // The page routes on its own when it draws: no need to route twice.
    analyzeAndRoute: async (text) => ({ analysis: analyzeFlowText(text), paths: null }),
    layout: async (cards, links, initial) => layOut(cards, links, initial),
    open: async (text, saved) => openAnalysed(analyzeFlowText(text), saved),
    openDrawn: async (text) => analyzeFlowText(text),
    dispose() {},
  };
}
