// Reading an http tool's JSON answer: the field a dotted path names (`slot.start`, `slots.0`), and
// the variable a field becomes.
import type { VariableValue } from './template.ts';

/** The value at a dotted path of own keys (list items by index); undefined when there is none. */
export function resultField(body: unknown, path: string): unknown {
  let current: unknown = body;
  for (const segment of path.split('.')) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/** Text, numbers and true/false as they are; lists and maps as their JSON, so a prompt can quote them. */
export function toVariable(value: unknown): VariableValue | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : undefined;
    case 'object':
      return value === null ? undefined : JSON.stringify(value);
    default:
      return undefined;
  }
}
