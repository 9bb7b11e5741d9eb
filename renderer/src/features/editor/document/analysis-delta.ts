// An analysis as the flow worker posts it to the page. A message to the page is copied
// (structured clone) and read back on the page's main thread, in the same task that then applies
// it: the whole data of a 500-state flow, and its 240 KiB text, every keystroke. A keystroke
// changes one state (incremental-analysis.ts splices the new state into the last data and keeps
// every other value as the same object), so the worker posts only the top-level values and the
// states that are not the very objects it posted last, and the page puts the rest back from the
// data it received last. The text is left out: the page sent it with the job. What the page gets
// equals what the worker analysed, key order included (test/renderer/features/editor/document/
// analysis-delta.test.ts).
import type { Diagnostic, FlowDocument } from '../../../../../server/flow/types.ts';
import type { Analysis } from '../../../../../server/flow/graph/analyze.ts';
import { isRecord, type FlowData } from '../../../../../server/flow/graph/flow-data.ts';

type Entries = Array<[string, unknown]>;

/** The data as posted: whole, or what changed since the data posted before it. */
export type DataMessage =
  | { kind: 'whole'; data: FlowData | null }
  | {
      kind: 'changed';
      /** Every top-level key in order; the values of those that changed (`states` never among them). */
      keys: string[];
      values: Entries;
      /** Every state in order; the values of those that changed. */
      states: string[];
      changedStates: Entries;
    };

export interface AnalysisMessage {
  diagnostics: Diagnostic[];
  /** The validated document is the data itself (as analyzeFlowText makes it), none, or another object. */
  document: { is: 'data' } | { is: 'none' } | { is: 'own'; document: FlowDocument };
  data: DataMessage;
  stateLines: Record<string, number>;
}

/** The worker's side: remembers the data it posted last. */
export class AnalysisPacker {
  private posted: FlowData | null = null;

  pack(analysis: Analysis): AnalysisMessage {
    const { data, document } = analysis;
    const message: AnalysisMessage = {
      diagnostics: analysis.diagnostics,
      document: document === null ? { is: 'none' } : (document as unknown) === data ? { is: 'data' } : { is: 'own', document },
      data: changedSince(this.posted, data),
      stateLines: analysis.stateLines,
    };
    this.posted = data;
    return message;
  }
}

/** The page's side: remembers the data it received last, to put the unchanged values back from. */
export class AnalysisUnpacker {
  private received: FlowData | null = null;

  unpack(message: AnalysisMessage, text: string): Analysis {
    const data = message.data.kind === 'whole' ? message.data.data : rebuilt(this.received!, message.data);
    this.received = data;
    const document = message.document.is === 'data' ? (data as unknown as FlowDocument) : message.document.is === 'own' ? message.document.document : null;
    return { text, diagnostics: message.diagnostics, document, data, stateLines: message.stateLines };
  }
}

function changedSince(before: FlowData | null, data: FlowData | null): DataMessage {
  if (!before || !data || !isRecord(before.states) || !isRecord(data.states)) return { kind: 'whole', data };
  const keys = Object.keys(data);
  const values: Entries = [];
  for (const key of keys) {
    if (key === 'states') continue;
    if (!Object.hasOwn(before, key) || before[key] !== data[key]) values.push([key, data[key]]);
  }
  const old = before.states;
  const states = Object.keys(data.states);
  const changedStates: Entries = [];
  for (const name of states) {
    const value = data.states[name];
    if (!Object.hasOwn(old, name) || old[name] !== value) changedStates.push([name, value]);
  }
  // Nothing shared (a whole parse): the changed form would only add the names.
  if (changedStates.length === states.length && values.length === keys.length - 1) return { kind: 'whole', data };
  return { kind: 'changed', keys, values, states, changedStates };
}

function rebuilt(before: FlowData, message: Extract<DataMessage, { kind: 'changed' }>): FlowData {
  const values = new Map(message.values);
  const changedStates = new Map(message.changedStates);
  const oldStates = before.states as Record<string, unknown>;
  // Object.fromEntries defines each key as the object's own (even `__proto__`), as a structured clone does.
  const states = Object.fromEntries(message.states.map((name) => [name, changedStates.has(name) ? changedStates.get(name) : oldStates[name]]));
  return Object.fromEntries(message.keys.map((key) => [key, key === 'states' ? states : values.has(key) ? values.get(key) : before[key]])) as FlowData;
}
