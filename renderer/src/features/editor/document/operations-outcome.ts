// Edits of the flow's `settings.outcome` and `settings.success` (docs/flows.md#outcome-and-success),
// made by the flow panel's "Outcome & success" section. Same rules as operations.ts: pure, never
// throw, change only what they must; an emptied map or list goes, so a flow that never used these
// keys stays as it was written. What they write is checked by the validator like typed YAML.
import { OUTCOME_TYPES, type OutcomeType } from '../../../../../server/flow/schema.ts';
import { isRecord, type FlowData } from '../../../../../server/flow/graph/flow-data.ts';
import { child, draft } from './operations.ts';

export { OUTCOME_TYPES };

export interface OutcomeFieldView {
  name: string;
  type: string;
  description: string;
  required: boolean;
  /** An enum's values. */
  values: string[];
}

export type CriterionKind = 'outcome' | 'reached' | 'transferred' | 'judge';
export const CRITERION_KINDS: readonly CriterionKind[] = ['outcome', 'reached', 'transferred', 'judge'];

export interface CriterionView {
  kind: CriterionKind | null;
  /** The condition, state or question; 'true'/'false' for transferred. */
  value: string;
}

type Obj = Record<string, unknown>;

function settingsOf(data: FlowData | null): Obj {
  return isRecord(data?.settings) ? data.settings : {};
}

export function readOutcome(data: FlowData | null): { fields: OutcomeFieldView[]; criteria: CriterionView[] } {
  const settings = settingsOf(data);
  const fields = Object.entries(isRecord(settings.outcome) ? settings.outcome : {}).map(([name, raw]) => {
    const field = isRecord(raw) ? raw : {};
    return {
      name,
      type: typeof field.type === 'string' ? field.type : '',
      description: typeof field.description === 'string' ? field.description : '',
      required: field.required === true,
      values: Array.isArray(field.values) ? field.values.map(String) : [],
    };
  });
  const criteria = (Array.isArray(settings.success) ? settings.success : []).map((raw): CriterionView => {
    const item = isRecord(raw) ? raw : {};
    const kind = CRITERION_KINDS.find((k) => Object.hasOwn(item, k)) ?? null;
    return { kind, value: kind === null ? '' : String(item[kind]) };
  });
  return { fields, criteria };
}

/** What one field is set to; null removes it. */
export interface OutcomeFieldPatch {
  type?: OutcomeType;
  description?: string;
  required?: boolean;
  values?: string[];
}

/** Adds, changes or (patch null) removes an outcome field. An enum keeps its values; another type drops them. */
export function setOutcomeField(data: FlowData, name: string, patch: OutcomeFieldPatch | null): FlowData {
  const next = draft(data);
  const settings = child(next, 'settings');
  if (patch === null) {
    if (!isRecord(settings.outcome) || !Object.hasOwn(settings.outcome, name)) return data;
    delete settings.outcome[name];
  } else {
    const outcome = child(settings, 'outcome');
    const field = child(outcome, name);
    if (field.type === undefined) field.type = patch.type ?? 'string';
    if (patch.type !== undefined) field.type = patch.type;
    if (patch.description !== undefined) {
      if (patch.description.trim() === '') delete field.description;
      else field.description = patch.description;
    }
    if (patch.required !== undefined) {
      if (patch.required) field.required = true;
      else delete field.required;
    }
    if (field.type === 'enum') {
      if (patch.values !== undefined) field.values = patch.values.map((v) => v.trim()).filter((v) => v !== '');
      if (!Array.isArray(field.values)) field.values = [];
    } else delete field.values;
  }
  if (isRecord(settings.outcome) && Object.keys(settings.outcome).length === 0) delete settings.outcome;
  if (Object.keys(settings).length === 0) delete next.settings;
  return next;
}

/** Replaces the success criteria, each written with its one key; an empty list removes the key. */
export function setSuccessCriteria(data: FlowData, criteria: CriterionView[]): FlowData {
  const next = draft(data);
  const settings = child(next, 'settings');
  const items = criteria.flatMap((c): Obj[] => {
    if (c.kind === null) return [];
    if (c.kind === 'transferred') return [{ transferred: c.value === 'true' }];
    return [{ [c.kind]: c.value }];
  });
  if (items.length === 0) delete settings.success;
  else settings.success = items;
  if (Object.keys(settings).length === 0) delete next.settings;
  return next;
}
