// The flow editor's state: the flow's text and what is derived from it (flow-text.svelte.ts),
// and its place on the server.
//
// - Positions are saved together with the text on Save: one Save, one "unsaved" state, no layout
//   writes behind the designer's back.
// - Save writes the flow's draft, never what is live (docs/flows.md#drafts); Publish makes the
//   draft the next version. The draft's ETag goes with every save and publish, so a draft changed
//   in another window since is never overwritten silently: the editor shows a conflict, and the
//   designer reloads theirs or keeps this one. A new flow's first save creates it (version 1).
import type { Diagnostic } from '../../../../../server/flow/types.ts';
import { api, serverOnThisMachine, type ApiResult, type FlowViewRecord } from '../../../lib/api.ts';
import { FlowText } from './flow-text.svelte.ts';
import { samePositions, type Positions } from '../../../../../server/flow/graph/layout.ts';

export type { EditOptions } from './flow-text.svelte.ts';

export type LoadState =
  | { kind: 'loading' }
  | { kind: 'ready' }
  | { kind: 'missing'; message: string }
  | { kind: 'failed'; message: string };

/** A saved flow and its draft as the server answered (both null for a flow not saved yet). */
export type FetchedFlow = readonly [Awaited<ReturnType<typeof api.getFlow>> | null, Awaited<ReturnType<typeof api.getDraft>> | null];

export class FlowEditor extends FlowText {
  load = $state<LoadState>({ kind: 'loading' });
  name = $state('');
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
  dirty = $derived(this.yaml !== this.savedYaml || !samePositions(this.positions, this.savedPositions));

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
    super();
    this.flowId = flowId;
  }

  /**
   * Opens the flow. `fetched` is its api.getFlow and api.getDraft, `worker` the flow worker
   * (spawnFlowWorker()) and `view` its api.getFlowView, when the screen started them already.
   * Resolves once the canvas can be drawn: from the server's view when it comes before the
   * worker's answer (`previewing` until that lands), else from the worker's answer.
   */
  async open(fetched?: Promise<FetchedFlow>, worker?: Worker | null, view?: Promise<ApiResult<FlowViewRecord>>): Promise<void> {
    this.startWorker(worker);
    // What the canvas draws, made on the server (null when it is not there, or of another text).
    const viewing = view ?? (this.flowId !== null && !fetched ? api.getFlowView(this.flowId) : null);
    // Whether it came before the text: the worker is then asked to place the states where the
    // view has them, and lays nothing out again (the same positions dagre would give).
    let arrived: ApiResult<FlowViewRecord> | null = null;
    void viewing?.then((answer) => (arrived = answer), () => {});
    const [result, draft] = await (fetched ?? (this.flowId !== null ? Promise.all([api.getFlow(this.flowId), api.getDraft(this.flowId)]) : [null, null]));
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
    // A new, unsaved flow (an imported file) has never been saved: everything in it is unsaved.
    this.savedYaml = result ? text : '';
    this.publishedYaml = result ? flow.yaml_content : '';
    this.publishedVersion = result?.value.published_version ?? null;
    this.etag = draft?.ok ? draft.value.etag : null;
    const etag = draft?.ok ? draft.value.etag : null;
    const ofThisText = (answer: ApiResult<FlowViewRecord>) => (answer.ok && answer.value.etag === etag ? answer.value.view : null);
    const drawn = viewing && etag !== null ? (arrived ? ofThisText(arrived) : viewing.then(ofThisText)) : null;
    const positions = await this.openText(text, flow.layout?.positions ?? {}, drawn, serverOnThisMachine);
    if (!positions) return;
    this.savedPositions = positions;
    this.load = { kind: 'ready' };
  }

  // ------------------------------------------------------------------------------------------
  // Saving

  /** Saves the text and the positions; resolves to whether the flow is saved. */
  save(): Promise<boolean> {
    // Asked while a save is in flight (it sent the text of its moment): once it is done, what was
    // edited since is saved too, rather than the request being taken as already answered.
    if (this.savePromise) return this.savePromise.then((ok) => (ok && this.dirty ? this.save() : ok));
    this.savePromise = this.put().finally(() => (this.savePromise = null));
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

  /**
   * A version published from the history (a rollback): live now. A saved draft stays as it is
   * (the server keeps it). Without one, the editor was showing the text live until now, and shows
   * what is live again, so Publish cannot ship the text just rolled back from; like Discard it is
   * one undo step, so typing not saved yet comes back with undo.
   */
  published(version: { number: number; yaml_content: string }): void {
    this.publishedVersion = version.number;
    this.publishedYaml = version.yaml_content;
    if (this.hasDraft) return;
    // Without a draft of its own, this window's tag named the old version: it names this one now.
    this.etag = `v${version.number}`;
    if (this.yaml !== version.yaml_content) this.replaceText(version.yaml_content);
    this.savedYaml = version.yaml_content;
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

  protected override changed(): void {
    // A refused save is news until the designer changes something; the problems stay listed.
    this.saveError = null;
  }
}
