// The flow being edited, as text: one source of truth, the YAML, and everything derived from it,
// with one history for the text and the positions. flow-editor.svelte.ts adds the server's side
// (load, save, publish, drafts) on top.
//
// A little over 400 lines on purpose: opening a text (the server's view, the worker, the page)
// and editing it share the versions that decide which analysis is current, so they stay together.
//
// - YAML typing sets the text; the text is analysed (parse + validate, flow-worker.ts) and the
//   graph follows the analysis. Analyses can come back out of order or late; each carries the
//   version of the text it was made from and an older one never replaces a newer one.
// - Graph and inspector edits are pure operations on the text's data (operations.ts), written
//   back with applyJsonToYaml so comments survive; the graph follows at once from the edited
//   data (no need to wait for the parse), and the diagnostics follow when the analysis is back.
// - When the text is not readable YAML the graph keeps the last data that was, marked stale,
//   and refuses graph edits until the text reads again.
// - Positions are part of the same undo step as the text (EditHistory).
import type { Diagnostic, FlowDocument } from '../../../../../server/flow/types.ts';
import { analyzeFlowText, type Analysis } from '../../../../../server/flow/graph/analyze.ts';
import { readStates, type FlowData } from '../../../../../server/flow/graph/flow-data.ts';
import { EMPTY_GRAPH, deriveGraph, keepSame, type FlowGraph } from '../../../../../server/flow/graph/graph.ts';
import { EditHistory } from './history.ts';
import { placeMissing, renamedStates, samePositions, type Positions } from '../../../../../server/flow/graph/layout.ts';
import { applyEditToText, type FlowEdit } from './operations.ts';
import type { EdgeRoutes, LaidOut, Opened } from '../../../../../server/flow/graph/laid-out.ts';
import type { FlowView } from '../../../../../server/flow/graph/view.ts';
import type { EdgePath } from '../../../../../server/flow/graph/edge-routes.ts';
import { startFlowWorker, type FlowWorker } from './worker-client.ts';
import { afterNextPaint } from '../../../lib/frames.ts';

interface Snapshot {
  yaml: string;
  positions: Positions;
}

export interface EditOptions {
  /** Changes with the same key in quick succession undo as one step (typing in a field). */
  key?: string;
  /** Positions after the edit (a new state's, a renamed state's); others are placed. */
  positions?: (current: Positions) => Positions;
  /** The state to select afterwards. */
  select?: string | null;
}

/**
 * How long a studio on the server's own machine waits for the server's view of a flow before its
 * worker parses the text too (a server busy with calls makes views last). A quiet server made the
 * view of a flow just created in 0.24-0.31 s at 200 states and 0.52-0.53 s at 500 (GET
 * /v1/flows/{id}/view timed from a client on the same machine, two flows of each size).
 */
const VIEW_FIRST_WAIT_MS = 1_500;
/** The frames the canvas takes a big flow in over (FlowGraph.svelte). */
const CANVAS_OPENING_PAINTS = 4;
/** Resolves after `count` frames have been painted (at once where nothing paints: tests in Node). */
async function paintsDone(count: number): Promise<void> {
  if (typeof requestAnimationFrame !== 'function') return;
  for (let i = 0; i < count; i++) await afterNextPaint();
}

/** Below this size a text is analysed on the page at once (< 10 ms): the graph follows typing. */
const ANALYZE_IN_PAGE_BELOW = 24 * 1024;

export class FlowText {
  /** The source of truth. */
  yaml = $state('');
  diagnostics = $state.raw<Diagnostic[]>([]);
  /** The text the diagnostics were made from (CodeMirror shows them only on that text). */
  diagnosedText = $state('');
  /** The validated document (null while the text has errors), for test-talk. */
  document = $state.raw<FlowDocument | null>(null);
  /** The data the graph and the inspector show; the last readable one when `stale`. */
  data = $state.raw<FlowData | null>(null);
  stale = $state(false);
  graph = $state.raw<FlowGraph>(EMPTY_GRAPH);
  positions = $state.raw<Positions>({});
  stateLines = $state.raw<Record<string, number>>({});
  selected = $state<string | null>(null);
  canUndo = $state(false);
  canRedo = $state(false);
  /** Something went wrong applying an edit (the text could not take it). */
  editError = $state<string | null>(null);
  laidOut = $state(false);
  /**
   * The canvas is drawn from the server's view of the flow and the flow worker has not answered
   * yet: no analysis, so no data for graph or inspector edits (they are refused), and the canvas
   * is read-only. Typing in the YAML is kept and analysed as ever.
   */
  previewing = $state(false);
  /** Where the edges run, as the flow worker routed them with its last layout (see laid-out.ts). */
  routes = $state.raw<EdgeRoutes | null>(null);

  private history = new EditHistory<Snapshot>({ yaml: '', positions: {} }, {}, (a, b) => a.yaml === b.yaml && samePositions(a.positions, b.positions));
  protected worker: FlowWorker | null = null;
  private version = 0;
  private appliedVersion = -1;
  private analysing = false;

  /** Starts the flow worker (or takes one spawnFlowWorker() started); the text is analysed and laid out there. */
  protected startWorker(started?: Worker | null): void {
    this.worker = startFlowWorker(started);
  }

  /**
   * Shows a text as opened (nothing to undo): analysed, its states placed where `saved` says
   * (dagre lays out a flow never laid out; a flow laid out before keeps every position and only
   * places states added since). Resolves to the positions once the canvas can be drawn, or null
   * when the editor was closed.
   *
   * `view`: the canvas the server made for this very text and layout (GET /v1/flows/{id}/view,
   * made by the same code as the worker's open job), or null. A text the worker opens (a big one,
   * one never laid out, or any with `viewFirst`) whose view arrives before the worker's answer is
   * drawn from it at once, read-only (`previewing`: no analysis, no data for the inspector yet);
   * the worker's answer then lands on it without redrawing what did not change (keepSame): the
   * same cards, links, positions and routes.
   *
   * `viewFirst`: the server is on this machine, so its view and the worker's parse would share
   * the same cores. The view is awaited first (up to VIEW_FIRST_WAIT_MS) and the worker parses
   * after the canvas is drawn from it; only without a view does the worker open the text. A first
   * open of a flow just created, cold pages, 5 rounds turn about against the worker parsing at once
   * beside a server that made no view (studio-before-after --new-flow): 50 states 737 -> 691 ms,
   * 200 states 744 -> 652 ms (another run: 656 -> 649), 500 states 946 -> 850 ms.
   */
  protected async openText(text: string, saved: Positions, view: FlowView | Promise<FlowView | null> | null = null, viewFirst = false): Promise<Positions | null> {
    this.yaml = text;
    const version = this.version;
    if (viewFirst && view instanceof Promise) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), VIEW_FIRST_WAIT_MS)));
      const answered = await Promise.race([view.catch(() => null), late]);
      clearTimeout(timer);
      if (answered !== 'late') view = answered;
      if (!this.worker) return null;
    }
    // A flow never laid out waits for the worker's layout whatever its size, and on the server's
    // own machine the view comes first whatever the size, so the worker parses the text in either
    // case: on a page that has not run the parser yet, parsing a 50-state flow on the page took
    // 62 ms of the main thread (profile-studio.ts 50 --cold), in the way of the canvas being built.
    const needsLayout = Object.keys(saved).length === 0;
    const inWorker = (text.length >= ANALYZE_IN_PAGE_BELOW || needsLayout || viewFirst) && this.worker !== null;
    // A view here already (it came before the text) is drawn at once, and the worker is asked for
    // the analysis alone: the view is the graph, the positions and the routes its open job gives.
    const viewNow = inWorker && view && !(view instanceof Promise) && view.cards.length > 0 ? view : null;
    if (viewNow) {
      this.showView(viewNow);
      // The worker parses once the canvas has taken the flow in: parsing beside those frames, on two
      // cores shared with the browser's own processes, made them wait for a core (studio-before-after
      // --cold, 6 rounds turn about: the longest frame opening 200 states 135 -> 73 ms, 500 states
      // 102 -> 75 ms; the canvas read-only those four frames longer).
      const analysing = paintsDone(CANVAS_OPENING_PAINTS).then(() => (this.worker ? this.worker.openDrawn(text) : Promise.reject(new Error('closed'))));
      void analysing.then((analysis) => this.openedAfterView({ analysis, graph: null, laidOut: null }, version), () => (this.previewing = false));
      return this.positions;
    }
    // Such a text is analysed, its states placed (dagre's layout for a flow never laid out) and its
    // edges routed in one job of the flow worker; a small one laid out before is analysed here at
    // once, and its positions are the saved ones.
    const opening = inWorker ? this.worker!.open(text, saved) : null;
    if (opening && view) {
      const first = await Promise.race([Promise.resolve(view).catch(() => null), opening.then(() => null)]);
      if (!this.worker) return null;
      if (first && first.cards.length > 0) {
        this.showView(first);
        void opening.then((opened) => this.openedAfterView(opened, version), () => (this.previewing = false));
        return this.positions;
      }
    }
    const opened = opening ? await opening : null;
    const analysis = opened?.analysis ?? (await this.analyze(text));
    if (!this.worker) return null;
    this.applyAnalysis(analysis, version, opened?.graph);
    const names = this.graph.cards.map((c) => c.name);
    const known: Positions = {};
    for (const name of names) if (saved[name]) known[name] = saved[name]!;
    const laidOut = opened?.laidOut;
    if (laidOut) this.routes = { cards: this.graph.cards, links: this.graph.links, positions: laidOut.positions, paths: laidOut.paths };
    const positions = laidOut
      ? laidOut.positions
      : Object.keys(known).length === 0 && names.length > 0
        ? await this.layOut().catch(() => null)
        : placeMissing(known, this.graph.cards, this.graph.links);
    if (!positions) return null;
    this.positions = positions;
    this.history.reset({ yaml: this.yaml, positions: this.positions });
    this.syncHistoryFlags();
    this.laidOut = true;
    this.readStatesWhenIdle(opened?.graph);
    return positions;
  }

  /** The server's view drawn while the worker still parses: read-only until its answer lands. */
  private showView(view: FlowView): void {
    this.previewing = true;
    this.graph = { cards: view.cards, links: view.links, initial: view.initial };
    this.positions = view.positions;
    this.routes = { cards: this.graph.cards, links: this.graph.links, positions: view.positions, paths: new Map(Object.entries(view.paths)) };
    this.history.reset({ yaml: this.yaml, positions: this.positions });
    this.syncHistoryFlags();
    this.laidOut = true;
  }

  /**
   * The worker's answer to the open, after the server's view was drawn: the analysis (the
   * problems, the inspector's data) and its graph, whose cards and links equal to the view's stay
   * the view's objects. Typing meanwhile moved the version on: its own analysis, asked since,
   * replaces this one when it lands.
   */
  private openedAfterView(opened: Pick<Opened, 'analysis'> & { graph: FlowGraph | null; laidOut: Opened['laidOut'] }, version: number): void {
    if (!this.worker) return;
    if (version >= this.appliedVersion) {
      const shown = this.graph;
      // No graph: the worker was asked for the analysis alone, of the very text the view is of.
      this.applyAnalysis(opened.analysis, version, opened.graph ? keepSame(opened.graph, shown) : shown);
      // Routes the worker made on these very positions, for a graph that differs from the view's.
      const laidOut = opened.laidOut;
      if (laidOut && this.graph !== shown && samePositions(laidOut.positions, this.positions)) {
        this.routes = { cards: this.graph.cards, links: this.graph.links, positions: this.positions, paths: laidOut.paths };
      }
    }
    this.previewing = false;
    this.readStatesWhenIdle(this.graph);
  }

  /**
   * The worker derived this graph, so the page has read none of its states: read them while the
   * page is idle, so the first keystroke's graph reads only the state it changed (readStates).
   */
  private readStatesWhenIdle(derivedInWorker: FlowGraph | undefined): void {
    const data = this.data;
    if (derivedInWorker && data && typeof requestIdleCallback === 'function') requestIdleCallback(() => readStates(data));
  }

  close(): void {
    this.worker?.dispose();
    this.worker = null;
  }

  // ------------------------------------------------------------------------------------------
  // Changes

  /**
   * The designer typed in the YAML, on `line`: typing on one line undoes as one step, an edit
   * on another line (even a moment later) as a step of its own.
   */
  setYaml(text: string, line?: number): void {
    if (text === this.yaml) return;
    this.yaml = text;
    this.version++;
    this.record(line === undefined ? 'yaml' : `yaml:${line}`);
    void this.requestAnalysis();
  }

  /** A graph or inspector edit. False when it changed nothing (or the text is unreadable). */
  edit(change: FlowEdit, options: EditOptions = {}): boolean {
    if (this.stale || !this.data) return false;
    let result: { text: string; data: FlowData } | null;
    try {
      const data = this.appliedVersion === this.version ? this.data : analyzeFlowText(this.yaml).data;
      if (!data) return false;
      result = applyEditToText(this.yaml, data, change);
    } catch (error) {
      this.editError = `That change could not be written into the YAML: ${error instanceof Error ? error.message : String(error)}`;
      return false;
    }
    if (!result) return false;
    this.editError = null;
    this.yaml = result.text;
    this.version++;
    this.appliedVersion = this.version;
    this.data = result.data;
    const before = this.graph.cards.map((c) => c.name);
    this.graph = deriveGraph(result.data, this.diagnostics, this.graph);
    const positions = options.positions ? options.positions(this.positions) : this.positions;
    this.positions = this.reconciled(positions, before);
    if (options.select !== undefined) this.selected = options.select;
    this.record(options.key ?? null);
    void this.requestAnalysis();
    return true;
  }

  /** Nodes dragged (or moved with the arrow keys) on the canvas. */
  move(updates: Positions): void {
    const changed = Object.entries(updates).some(([name, p]) => this.positions[name]?.x !== p.x || this.positions[name]?.y !== p.y);
    if (!changed) return;
    this.positions = { ...this.positions, ...updates };
    this.record(null);
  }

  async autoLayout(): Promise<void> {
    if (!this.worker) return;
    this.positions = await this.layOut();
    this.record(null);
  }

  /** dagre's layout of the graph as it is now, in the flow worker; its edge routes are kept beside it. */
  private async layOut(): Promise<Positions> {
    const { cards, links, initial } = this.graph;
    const laidOut: LaidOut = await this.worker!.layout(cards, links, initial);
    this.routes = { cards, links, positions: laidOut.positions, paths: laidOut.paths };
    return laidOut.positions;
  }

  select(name: string | null): void {
    this.selected = name;
  }

  undo(): void {
    this.restore(this.history.undo());
  }

  redo(): void {
    this.restore(this.history.redo());
  }

  /** Opens a text (an old version, a file) as unsaved changes of the draft: one undo step. */
  replaceText(text: string): void {
    if (text === this.yaml) return;
    this.yaml = text;
    this.version++;
    this.record(null);
    void this.requestAnalysis();
  }

  /** The text or the positions changed (an edit, undo or redo). */
  protected changed(): void {}

  // ------------------------------------------------------------------------------------------
  // Internals

  private record(key: string | null): void {
    this.history.record({ yaml: this.yaml, positions: this.positions }, key);
    this.syncHistoryFlags();
    this.changed();
  }

  private restore(snapshot: Snapshot | null): void {
    if (!snapshot) return;
    this.changed();
    this.yaml = snapshot.yaml;
    this.positions = snapshot.positions;
    this.version++;
    this.syncHistoryFlags();
    void this.requestAnalysis();
  }

  private syncHistoryFlags(): void {
    this.canUndo = this.history.canUndo;
    this.canRedo = this.history.canRedo;
  }

  protected analyze(text: string): Promise<Analysis> {
    if (text.length < ANALYZE_IN_PAGE_BELOW || !this.worker) return Promise.resolve(analyzeFlowText(text));
    return this.worker.analyze(text);
  }

  /** A big text's analysis in the flow worker, with its edges routed there when the flow is laid out; a small one's here. */
  private analyzeAndRoute(text: string, positions: Positions): Promise<{ analysis: Analysis; paths: Map<string, EdgePath> | null }> {
    if (text.length < ANALYZE_IN_PAGE_BELOW || !this.worker || !this.laidOut || Object.keys(positions).length === 0) {
      return this.analyze(text).then((analysis) => ({ analysis, paths: null }));
    }
    return this.worker.analyzeAndRoute(text, positions);
  }

  /**
   * One analysis at a time: while one runs, typing only moves the version on, and the text as
   * it is when the analysis comes back is analysed next. A big flow is re-analysed as fast as
   * the worker can, never queued behind every keystroke.
   */
  private async requestAnalysis(): Promise<void> {
    if (this.analysing) return;
    this.analysing = true;
    try {
      while (this.appliedVersion < this.version || this.diagnosedText !== this.yaml) {
        const version = this.version;
        const text = this.yaml;
        const positions = this.positions;
        const { analysis, paths } = await this.analyzeAndRoute(text, positions);
        if (version >= this.appliedVersion) {
          this.applyAnalysis(analysis, version);
          // The worker routed the edges of this very graph on these very positions: the canvas
          // takes them instead of routing every edge again on the page (laid-out.ts).
          if (paths && analysis.data && this.positions === positions) {
            this.routes = { cards: this.graph.cards, links: this.graph.links, positions, paths };
          }
        }
        if (version === this.version) break;
      }
    } finally {
      this.analysing = false;
    }
  }

  /** `graph`: the analysis's graph, when the flow worker derived it already (opening a flow). */
  private applyAnalysis(analysis: Analysis, version: number, graph?: FlowGraph): void {
    this.appliedVersion = version;
    this.diagnostics = analysis.diagnostics;
    this.diagnosedText = analysis.text;
    this.document = analysis.document;
    this.stale = analysis.data === null;
    if (analysis.data) {
      this.data = analysis.data;
      this.stateLines = analysis.stateLines;
    }
    const before = this.graph.cards.map((c) => c.name);
    this.graph = graph ?? deriveGraph(this.data, this.diagnostics, this.graph);
    if (!this.laidOut) return;
    if (Object.keys(this.positions).length === 0 && this.graph.cards.length > 0) {
      // The flow opened unreadable and just became readable: lay it all out, as on a first open.
      if (!this.worker) return;
      void this.layOut().then((positions) => {
        this.positions = positions;
        this.history.amend({ yaml: this.yaml, positions });
      });
      return;
    }
    const positions = this.reconciled(this.positions, before);
    if (positions !== this.positions) {
      this.positions = positions;
      // Placing a state the YAML added belongs to the edit that added it.
      this.history.amend({ yaml: this.yaml, positions });
    }
    if (this.selected !== null && !this.graph.cards.some((c) => c.name === this.selected)) {
      const renamed = renamedStates(before, this.graph.cards.map((c) => c.name));
      this.selected = Object.entries(renamed).find(([, old]) => old === this.selected)?.[0] ?? null;
    }
  }

  /** Positions for exactly the graph's states: new ones placed, removed ones dropped. */
  private reconciled(positions: Positions, namesBefore: string[]): Positions {
    const names = this.graph.cards.map((c) => c.name);
    const complete = names.every((n) => positions[n]) && Object.keys(positions).length === names.length;
    if (complete) return positions;
    return placeMissing(positions, this.graph.cards, this.graph.links, renamedStates(namesBefore, names));
  }
}
