// The flow editor's state: one source of truth, the YAML text, and everything derived from it.
//
// - YAML typing sets the text; the text is analysed (parse + validate, flow-worker.ts) and the
//   graph follows the analysis. Analyses can come back out of order or late; each carries the
//   version of the text it was made from and an older one never replaces a newer one.
// - Graph and inspector edits are pure operations on the text's data (operations.ts), written
//   back with applyJsonToYaml so comments survive; the graph follows at once from the edited
//   data (no need to wait for the parse), and the diagnostics follow when the analysis is back.
// - When the text is not readable YAML the graph keeps the last data that was, marked stale,
//   and refuses graph edits until the text reads again.
// - Positions are part of the same undo step as the text (EditHistory) and are saved together
//   with it on Save: one Save, one "unsaved" state, no layout writes behind the designer's back.
// - Save writes the flow's draft, never what is live (DESIGN §13); Publish makes the draft the
//   next version. The draft's ETag goes with every save and publish, so a draft changed in
//   another window since is never overwritten silently: the editor shows a conflict, and the
//   designer reloads theirs or keeps this one. A new flow's first save creates it (version 1).
//
// Over 400 lines on purpose: editing, saving and publishing share one state (the text, what is
// saved, what is live, the draft's tag), and split apart each half would reach into the other's.
import type { Diagnostic, FlowDocument } from '../../../../server/flow/types.ts';
import { api } from '../../lib/api.ts';
import { analyzeFlowText, type Analysis } from './analyze.ts';
import type { FlowData } from './flow-data.ts';
import { EMPTY_GRAPH, deriveGraph, type FlowGraph } from './graph.ts';
import { EditHistory } from './history.ts';
import { placeMissing, renamedStates, samePositions, type Positions } from './layout.ts';
import { applyEditToText, type FlowEdit } from './operations.ts';
import { startFlowWorker, type FlowWorker } from './worker-client.ts';

export type LoadState =
  | { kind: 'loading' }
  | { kind: 'ready' }
  | { kind: 'missing'; message: string }
  | { kind: 'failed'; message: string };

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

/** Below this size a text is analysed on the page at once (< 10 ms): the graph follows typing. */
const ANALYZE_IN_PAGE_BELOW = 24 * 1024;

export class FlowEditor {
  load = $state<LoadState>({ kind: 'loading' });
  name = $state('');
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
  savedYaml = $state('');
  savedPositions = $state.raw<Positions>({});
  saving = $state(false);
  saveError = $state<{ message: string; diagnostics: Diagnostic[] } | null>(null);
  savedAt = $state<number | null>(null);
  /** The live version's number and text: what a backend's sessions run (null: a new flow). */
  publishedVersion = $state<number | null>(null);
  publishedYaml = $state('');
  publishing = $state(false);
  publishError = $state<{ message: string; diagnostics: Diagnostic[] } | null>(null);
  /** A save or publish was refused: the draft was changed elsewhere since this window read it. */
  conflict = $state<{ action: 'save' | 'publish' | 'discard'; note: string } | null>(null);
  discarding = $state(false);
  /** Something went wrong applying an edit (the text could not take it). */
  editError = $state<string | null>(null);
  laidOut = $state(false);
  dirty = $derived(this.yaml !== this.savedYaml || !samePositions(this.positions, this.savedPositions));

  private history = new EditHistory<Snapshot>({ yaml: '', positions: {} }, {}, (a, b) => a.yaml === b.yaml && samePositions(a.positions, b.positions));
  private worker: FlowWorker | null = null;
  private version = 0;
  private appliedVersion = -1;
  private analysing = false;
  private savePromise: Promise<boolean> | null = null;
  /** The draft's tag as last read or saved, sent as If-Match ("v<n>": no draft, the live version's). */
  private etag = $state<string | null>(null);
  /** The tag the conflicting draft has now: "keep mine" saves over exactly that one. */
  private conflictEtag: string | null = null;

  /** The flow's id; null for a draft until its first save creates the flow. */
  flowId = $state<string | null>(null);
  /** Saved text that is not live yet (or typing not even saved). */
  unpublished = $derived(this.flowId !== null && (this.dirty || this.savedYaml !== this.publishedYaml));
  /** The flow has a saved draft of its own (without one the server tags the live version). */
  hasDraft = $derived(this.flowId !== null && this.etag !== null && !this.etag.startsWith('v'));

  constructor(
    flowId: string | null,
    /** A flow not saved yet (an imported file with errors): opened unsaved, created by Save. */
    private readonly draft: { name: string; yaml: string } | null = null,
  ) {
    this.flowId = flowId;
  }

  async open(): Promise<void> {
    this.worker = startFlowWorker();
    const [result, draft] = this.flowId !== null ? await Promise.all([api.getFlow(this.flowId), api.getDraft(this.flowId)]) : [null, null];
    // Left before the flow arrived (close() stopped the worker): nothing more to do.
    if (!this.worker) return;
    if (result && !result.ok) {
      this.load =
        result.status === 404
          ? { kind: 'missing', message: 'This flow does not exist, or it belongs to another account.' }
          : { kind: 'failed', message: result.message };
      return;
    }
    const flow = result?.value ?? { name: this.draft?.name ?? 'Imported flow', yaml_content: this.draft?.yaml ?? '', layout: null };
    // The designer edits the draft; with none yet, the live text (the first save makes the draft).
    const text = draft?.ok ? draft.value.yaml_content : flow.yaml_content;
    this.name = flow.name;
    this.yaml = text;
    // A new, unsaved flow (an imported file) has never been saved: everything in it is unsaved.
    this.savedYaml = result ? text : '';
    this.publishedYaml = result ? flow.yaml_content : '';
    this.publishedVersion = result?.value.published_version ?? null;
    this.etag = draft?.ok ? draft.value.etag : null;
    const analysis = await this.analyze(text);
    if (!this.worker) return;
    this.applyAnalysis(analysis, this.version);
    const saved = flow.layout?.positions ?? {};
    const names = this.graph.cards.map((c) => c.name);
    const known: Positions = {};
    for (const name of names) if (saved[name]) known[name] = saved[name]!;
    // A flow never laid out (made by the API or from the template) gets dagre's layout; one laid
    // out before keeps every position and only places states that were added since.
    const positions =
      Object.keys(known).length === 0 && names.length > 0
        ? await this.worker.layout(this.graph.cards, this.graph.links, this.graph.initial).catch(() => null)
        : placeMissing(known, this.graph.cards, this.graph.links);
    if (!positions) return;
    this.positions = positions;
    this.savedPositions = this.positions;
    this.history.reset({ yaml: this.yaml, positions: this.positions });
    this.syncHistoryFlags();
    this.laidOut = true;
    this.load = { kind: 'ready' };
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
    const positions = await this.worker.layout(this.graph.cards, this.graph.links, this.graph.initial);
    this.positions = positions;
    this.record(null);
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

  // ------------------------------------------------------------------------------------------
  // Saving

  /** Saves the text and the positions; resolves to whether the flow is saved. */
  save(): Promise<boolean> {
    this.savePromise ??= this.put().finally(() => (this.savePromise = null));
    return this.savePromise;
  }

  private async put(): Promise<boolean> {
    const yaml = this.yaml;
    const positions = this.positions;
    this.saving = true;
    // A draft may have errors (it is work in progress; Publish refuses them). A new flow may
    // not: the server refuses to create it (422), so say so without asking it, so an expected
    // refusal is no failed request (and no browser console error).
    if (this.flowId === null) {
      const refusal = this.errorsOf(await this.diagnosticsOf(yaml));
      if (refusal) {
        this.saving = false;
        this.saveError = refusal;
        return false;
      }
    }
    const result = await this.store(yaml, positions);
    this.saving = false;
    if (!result.ok) {
      if (this.isConflict(result, 'save')) return false;
      this.saveError = { message: result.message, diagnostics: Array.isArray(result.details) ? (result.details as Diagnostic[]) : [] };
      return false;
    }
    this.saveError = null;
    this.conflict = null;
    this.savedYaml = yaml;
    this.savedPositions = positions;
    this.savedAt = Date.now();
    // Typing during the request leaves the editor dirty against what was sent, as it should.
    return true;
  }

  /**
   * Writes the draft and the positions (layout is the flow's, not a version's, so it is saved
   * as it always was). A new flow's first save creates it: version 1, published.
   */
  private async store(yaml: string, positions: Positions) {
    if (this.flowId !== null) {
      // Only positions moved: the server has this text already (as the draft, or live).
      if (yaml !== this.savedYaml) {
        const saved = await api.saveDraft(this.flowId, yaml, this.etag);
        if (!saved.ok) return saved;
        this.etag = saved.value.etag;
        this.publishedVersion = saved.value.published_version;
      }
      return api.updateFlow(this.flowId, { layout: { positions } });
    }
    const created = await api.createFlow(this.name.trim() || 'Imported flow', yaml);
    if (!created.ok) return created;
    this.flowId = created.value.id;
    this.publishedYaml = created.value.yaml_content;
    this.publishedVersion = created.value.published_version ?? 1;
    this.etag = `v${this.publishedVersion}`;
    return api.updateFlow(created.value.id, { layout: { positions } });
  }

  /**
   * Makes the draft live as the next version, with a note; saves typing first. Refused here,
   * with no request, while the text has errors, as the server would (422).
   */
  async publish(note: string): Promise<boolean> {
    if (this.flowId === null || this.publishing) return false;
    this.publishError = null;
    if (this.dirty && !(await this.save())) return false;
    const refusal = this.errorsOf(await this.diagnosticsOf(this.savedYaml));
    if (refusal) {
      this.publishError = { ...refusal, message: `Not published: ${refusal.message}` };
      return false;
    }
    this.publishing = true;
    const result = await api.publishDraft(this.flowId, note.trim(), this.etag);
    this.publishing = false;
    if (!result.ok) {
      if (this.isConflict(result, 'publish', note)) return false;
      this.publishError = { message: result.message, diagnostics: Array.isArray(result.details) ? (result.details as Diagnostic[]) : [] };
      return false;
    }
    this.afterPublish(result.value.flow.yaml_content, result.value.version.number);
    return true;
  }

  /** A version published from the history (a rollback): live now; the draft stays as it is. */
  published(version: { number: number; yaml_content: string }): void {
    this.publishedVersion = version.number;
    this.publishedYaml = version.yaml_content;
    // Without a draft of its own, this window's tag named the old version: it names this one now.
    if (this.etag?.startsWith('v')) this.etag = `v${version.number}`;
  }

  private afterPublish(yaml: string, number: number): void {
    this.publishedYaml = yaml;
    this.publishedVersion = number;
    this.etag = `v${number}`;
    this.conflict = null;
  }

  /** The conflict's two ways out: take the other window's draft, or save this one over it. */
  async reloadDraft(): Promise<boolean> {
    if (this.flowId === null) return false;
    const [flow, draft] = await Promise.all([api.getFlow(this.flowId), api.getDraft(this.flowId)]);
    if (!flow.ok || !draft.ok) {
      this.saveError = { message: (!flow.ok ? flow : (draft as { message: string })).message, diagnostics: [] };
      return false;
    }
    this.conflict = null;
    this.etag = draft.value.etag;
    this.publishedYaml = flow.value.yaml_content;
    this.publishedVersion = flow.value.published_version ?? this.publishedVersion;
    // One undo step: undo brings this window's text back (unsaved), should the designer want it.
    this.replaceText(draft.value.yaml_content);
    this.savedYaml = draft.value.yaml_content;
    return true;
  }

  async keepMine(): Promise<boolean> {
    const pending = this.conflict;
    if (!pending) return false;
    this.etag = this.conflictEtag;
    this.conflict = null;
    if (pending.action === 'discard') return (await this.discardDraft()) === null;
    return pending.action === 'publish' ? this.publish(pending.note) : this.save();
  }

  /**
   * Discard draft: the server deletes the flow's draft (the live version stays as it is) and the
   * editor shows the live text again, as saved; typing not saved yet goes too. Like Reload, it is
   * one undo step: undo brings the discarded text back as unsaved changes, should the designer
   * want it after all. A draft saved elsewhere since this window read it is a conflict (Keep mine
   * discards that one too), so nobody's work goes unseen. Resolves to an error message, or null.
   */
  async discardDraft(): Promise<string | null> {
    if (this.flowId === null || this.discarding) return null;
    this.discarding = true;
    const discarded = await api.discardDraft(this.flowId, this.etag);
    if (!discarded.ok) {
      this.discarding = false;
      return this.isConflict(discarded, 'discard') ? null : `Not discarded: ${discarded.message}`;
    }
    // The live text as the server has it now (another window may have published since).
    const flow = await api.getFlow(this.flowId);
    this.discarding = false;
    if (!flow.ok) return `The draft was discarded, but the live version could not be read: ${flow.message}`;
    this.conflict = null;
    this.saveError = null;
    this.publishedYaml = flow.value.yaml_content;
    this.publishedVersion = flow.value.published_version ?? this.publishedVersion;
    this.etag = `v${this.publishedVersion}`;
    this.replaceText(flow.value.yaml_content);
    this.savedYaml = flow.value.yaml_content;
    return null;
  }

  /** Opens a text (an old version, a file) as unsaved changes of the draft: one undo step. */
  replaceText(text: string): void {
    if (text === this.yaml) return;
    this.yaml = text;
    this.version++;
    this.record(null);
    void this.requestAnalysis();
  }

  private isConflict(result: { code: string; details: unknown }, action: 'save' | 'publish' | 'discard', note = ''): boolean {
    if (result.code !== 'draft_conflict') return false;
    const detail = Array.isArray(result.details) ? (result.details[0] as { current_etag?: string } | undefined) : undefined;
    this.conflictEtag = detail?.current_etag ?? null;
    this.conflict = { action, note };
    return true;
  }

  private async diagnosticsOf(yaml: string): Promise<Diagnostic[]> {
    return this.diagnosedText === yaml ? this.diagnostics : (await this.analyze(yaml)).diagnostics;
  }

  private errorsOf(diagnostics: Diagnostic[]): { message: string; diagnostics: Diagnostic[] } | null {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    if (errors.length === 0) return null;
    const first = errors[0]!;
    return {
      message: `The flow document has ${errors.length} ${errors.length === 1 ? 'error' : 'errors'}; the first, at line ${first.line}, column ${first.column}: ${first.message}`,
      diagnostics,
    };
  }

  async rename(name: string): Promise<string | null> {
    const trimmed = name.trim();
    if (trimmed === '' || trimmed === this.name) return null;
    // A draft's name goes with its first save.
    if (this.flowId === null) {
      this.name = trimmed;
      return null;
    }
    const result = await api.updateFlow(this.flowId, { name: trimmed });
    if (!result.ok) return result.message;
    this.name = result.value.name;
    return null;
  }

  // ------------------------------------------------------------------------------------------
  // Internals

  private record(key: string | null): void {
    this.history.record({ yaml: this.yaml, positions: this.positions }, key);
    this.syncHistoryFlags();
    // A refused save is news until the designer changes something; the problems stay listed.
    this.saveError = null;
  }

  private restore(snapshot: Snapshot | null): void {
    if (!snapshot) return;
    this.saveError = null;
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

  private analyze(text: string): Promise<Analysis> {
    if (text.length < ANALYZE_IN_PAGE_BELOW || !this.worker) return Promise.resolve(analyzeFlowText(text));
    return this.worker.analyze(text);
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
        const analysis = await this.analyze(text);
        if (version >= this.appliedVersion) this.applyAnalysis(analysis, version);
        if (version === this.version) break;
      }
    } finally {
      this.analysing = false;
    }
  }

  private applyAnalysis(analysis: Analysis, version: number): void {
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
    this.graph = deriveGraph(this.data, this.diagnostics, this.graph);
    if (!this.laidOut) return;
    if (Object.keys(this.positions).length === 0 && this.graph.cards.length > 0) {
      // The flow opened unreadable and just became readable: lay it all out, as on a first open.
      void this.worker?.layout(this.graph.cards, this.graph.links, this.graph.initial).then((positions) => {
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
