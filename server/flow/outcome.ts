// A flow's `settings.outcome` and `settings.success` (docs/flows.md#outcome-and-success): the
// strict JSON schema the model is asked to fill, the check of each value it gives, and the plain
// success criteria, which need no model. Pure: the validator, the server's analysis and the
// studio share it.
import type { OutcomeField, OutcomeType, SuccessCriterion } from './schema.ts';

export type OutcomeValue = string | number | boolean;

/** `booked == true`, `status != "cancelled"`: an outcome field compared to a value. */
export interface OutcomeCondition {
  field: string;
  op: '==' | '!=';
  value: OutcomeValue;
}

const CONDITION = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(==|!=)\s*(.+?)\s*$/;
const BARE_WORD = /^[A-Za-z0-9_.:+-]+$/;

/** Reads an `outcome:` criterion; a string is what is wrong with it. */
export function parseOutcomeCondition(text: string): OutcomeCondition | string {
  const match = CONDITION.exec(text);
  if (!match) return `"${text}" is not FIELD == VALUE or FIELD != VALUE`;
  const [, field, op, raw] = match as unknown as [string, string, '==' | '!=', string];
  return { field, op, value: literal(raw) };
}

function literal(raw: string): OutcomeValue {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (/^-?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  const quoted = /^"(.*)"$|^'(.*)'$/.exec(raw);
  if (quoted) return quoted[1] ?? quoted[2] ?? '';
  return raw;
}

/** Whether `raw` (the text after the operator) is a value the grammar accepts. */
export function conditionValueProblem(text: string): string | null {
  const match = CONDITION.exec(text);
  if (!match) return null;
  const raw = match[3]!;
  if (/^"(.*)"$|^'(.*)'$/.test(raw) || BARE_WORD.test(raw)) return null;
  return `the value "${raw}" has spaces or symbols: quote it ("like this")`;
}

/** Why `value` does not fit `field`; null when it does. */
export function outcomeValueProblem(field: Pick<OutcomeField, 'type' | 'values'>, value: unknown): string | null {
  switch (field.type) {
    case 'string':
      return typeof value === 'string' ? null : `expected text, got ${describe(value)}`;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : `expected a number, got ${describe(value)}`;
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value) ? null : `expected a whole number, got ${describe(value)}`;
    case 'boolean':
      return typeof value === 'boolean' ? null : `expected true or false, got ${describe(value)}`;
    case 'enum':
      return typeof value === 'string' && (field.values ?? []).includes(value) ? null : `expected one of ${(field.values ?? []).join(', ')}, got ${describe(value)}`;
    case 'date':
      return typeof value === 'string' && isCalendarDate(value) ? null : `expected a date (YYYY-MM-DD), got ${describe(value)}`;
  }
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function isCalendarDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return date.toISOString().slice(0, 10) === text;
}

/**
 * A variable's value as an outcome field takes it: as it is when it fits, or text that reads
 * plainly as the field's type ("3" for a number, "true" for a boolean, as tools' results and
 * collected keypad digits are text). Undefined when it cannot be taken.
 */
export function valueFromVariable(field: Pick<OutcomeField, 'type' | 'values'>, value: unknown): OutcomeValue | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (outcomeValueProblem(field, value) === null) return value as OutcomeValue;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if ((field.type === 'number' || field.type === 'integer') && /^-?\d+(\.\d+)?$/.test(text)) {
    const number = Number(text);
    return outcomeValueProblem(field, number) === null ? number : undefined;
  }
  if (field.type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return undefined;
}

const JSON_TYPE: Record<Exclude<OutcomeType, 'enum' | 'date'>, string> = { string: 'string', number: 'number', integer: 'integer', boolean: 'boolean' };

/**
 * The strict JSON schema of the fields the model is asked for. OpenAI's strict mode requires every
 * property and no others, so a field the call did not settle is `null` rather than left out.
 */
export function outcomeJsonSchema(fields: Record<string, Pick<OutcomeField, 'type' | 'values' | 'description'>>): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(fields)) {
    const description = [field.description, field.type === 'date' ? 'A date as YYYY-MM-DD.' : undefined, 'null when the call did not settle it.'].filter(Boolean).join(' ');
    properties[name] =
      field.type === 'enum'
        ? { type: ['string', 'null'], enum: [...(field.values ?? []), null], description }
        : { type: [field.type === 'date' ? 'string' : JSON_TYPE[field.type], 'null'], description };
  }
  return { type: 'object', properties, required: Object.keys(fields), additionalProperties: false };
}

/** A judged criterion's answer. */
export const JUDGE_JSON_SCHEMA = {
  type: 'object',
  properties: { met: { type: 'boolean' }, reason: { type: 'string' } },
  required: ['met', 'reason'],
  additionalProperties: false,
} as const;

export type CriterionResult = true | false | 'unknown';

/** What the plain criteria are judged on: the outcome as analysed, the states entered, a transfer. */
export interface CallFacts {
  /** The field's value; absent when it is unknown. */
  outcome: Record<string, OutcomeValue | undefined>;
  states: ReadonlySet<string>;
  transferred: boolean;
}

/** The one key a criterion has, or null when it has none or several (a validation error). */
export function criterionKind(criterion: SuccessCriterion): keyof SuccessCriterion | null {
  const keys = (Object.keys(criterion) as Array<keyof SuccessCriterion>).filter((k) => criterion[k] !== undefined);
  return keys.length === 1 ? keys[0]! : null;
}

/** A criterion as one line, for the reasons a call's success lists. */
export function criterionText(criterion: SuccessCriterion): string {
  const kind = criterionKind(criterion);
  return kind ? `${kind}: ${String(criterion[kind])}` : JSON.stringify(criterion);
}

/** A plain criterion (not `judge`) on what the call did; no model. */
export function evaluatePlain(criterion: SuccessCriterion, facts: CallFacts): { met: CriterionResult; reason: string } {
  if (criterion.reached !== undefined) {
    const met = facts.states.has(criterion.reached);
    return { met, reason: met ? `the call reached the state "${criterion.reached}"` : `the call never reached the state "${criterion.reached}"` };
  }
  if (criterion.transferred !== undefined) {
    const met = facts.transferred === criterion.transferred;
    return { met, reason: facts.transferred ? 'the call was transferred' : 'the call was not transferred' };
  }
  if (criterion.outcome !== undefined) {
    const condition = parseOutcomeCondition(criterion.outcome);
    if (typeof condition === 'string') return { met: 'unknown', reason: condition };
    const value = facts.outcome[condition.field];
    if (value === undefined) return { met: 'unknown', reason: `outcome.${condition.field} is unknown` };
    const equal = value === condition.value;
    const met = condition.op === '==' ? equal : !equal;
    return { met, reason: `outcome.${condition.field} is ${JSON.stringify(value)}` };
  }
  return { met: 'unknown', reason: 'not a plain criterion' };
}

/** A call's success from its criteria: false if one is not met, else unknown if one is unknown, else true. */
export function overallSuccess(results: CriterionResult[]): CriterionResult {
  if (results.includes(false)) return false;
  if (results.includes('unknown')) return 'unknown';
  return true;
}
