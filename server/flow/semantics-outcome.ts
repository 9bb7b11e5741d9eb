// Checks of `settings.outcome` and `settings.success` (docs/flows.md#outcome-and-success) beyond
// their shape: an enum's values, each criterion's one key, an `outcome:` condition's grammar, the
// field and state it names, and that the value compared fits the field.
import { conditionValueProblem, outcomeValueProblem, parseOutcomeCondition } from './outcome.ts';
import type { SemanticProblem } from './semantics.ts';
import type { OutcomeField } from './schema.ts';

type Obj = Record<string, unknown>;

function asObject(value: unknown): Obj | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Obj) : null;
}

const CRITERION_KEYS = ['outcome', 'reached', 'transferred', 'judge'];

export function checkOutcomeRules(doc: Obj, states: Obj, out: SemanticProblem[]): void {
  const settings = asObject(doc.settings);
  const fields = asObject(settings?.outcome) ?? {};
  for (const [name, raw] of Object.entries(fields)) {
    const field = asObject(raw);
    if (!field) continue;
    const path = ['settings', 'outcome', name];
    const values = field.values;
    if (field.type === 'enum') {
      if (!Array.isArray(values)) {
        out.push({ code: 'invalid_outcome_field', message: `outcome field "${name}" is an enum without values: list the values it may take`, path, atKey: true });
      } else if (values.length === 0) {
        out.push({ code: 'invalid_outcome_field', message: `outcome field "${name}" has an empty values list: the model could give nothing`, path: [...path, 'values'], atKey: true });
      } else {
        const seen = new Set<unknown>();
        values.forEach((value, index) => {
          if (seen.has(value)) out.push({ code: 'invalid_outcome_field', message: `outcome field "${name}" lists the value "${String(value)}" twice`, path: [...path, 'values', index], atKey: false });
          seen.add(value);
        });
      }
    } else if (values !== undefined && typeof field.type === 'string') {
      out.push({ code: 'invalid_outcome_field', message: `outcome field "${name}" is a ${field.type}: only an enum has values`, path: [...path, 'values'], atKey: true });
    }
  }

  const criteria = settings?.success;
  if (!Array.isArray(criteria)) return;
  criteria.forEach((raw, index) => {
    const criterion = asObject(raw);
    if (!criterion) return;
    const path = ['settings', 'success', index];
    const keys = Object.keys(criterion).filter((k) => CRITERION_KEYS.includes(k));
    // An unknown key is the structure check's unknown_key, which says enough.
    if (keys.length < Object.keys(criterion).length) return;
    if (keys.length !== 1) {
      out.push({
        code: 'invalid_success_criterion',
        message: keys.length === 0 ? 'a success criterion needs one of outcome, reached, transferred or judge' : `a success criterion has one key, not ${keys.join(' and ')}: write each as its own item`,
        path,
        atKey: false,
      });
      return;
    }
    const at = [...path, keys[0]!];
    if (typeof criterion.reached === 'string' && !Object.hasOwn(states, criterion.reached)) {
      out.push({ code: 'invalid_success_criterion', message: `reached: "${criterion.reached}" is not one of the states (${Object.keys(states).join(', ')})`, path: at, atKey: false });
    }
    if (typeof criterion.judge === 'string' && criterion.judge.trim() === '') {
      out.push({ code: 'invalid_success_criterion', message: 'judge: the question for the model is empty', path: at, atKey: false });
    }
    if (typeof criterion.outcome === 'string') {
      const problem = outcomeConditionProblem(criterion.outcome, fields);
      if (problem) out.push({ code: 'invalid_success_criterion', message: problem, path: at, atKey: false });
    }
  });
}

function outcomeConditionProblem(text: string, fields: Obj): string | null {
  const condition = parseOutcomeCondition(text);
  if (typeof condition === 'string') return `outcome: ${condition} (for example booked == true)`;
  const valueProblem = conditionValueProblem(text);
  if (valueProblem) return `outcome: ${valueProblem}`;
  const field = asObject(fields[condition.field]);
  if (!field) {
    const names = Object.keys(fields);
    return `outcome: "${condition.field}" is not a field of settings.outcome${names.length > 0 ? ` (${names.join(', ')})` : ' (it declares none)'}`;
  }
  if (typeof field.type !== 'string') return null;
  const problem = outcomeValueProblem(field as Pick<OutcomeField, 'type' | 'values'>, condition.value);
  return problem ? `outcome: ${condition.field} can never be ${JSON.stringify(condition.value)}: ${problem}` : null;
}
