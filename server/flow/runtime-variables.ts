// A session's flow variables: filled from the start `context`, then set by a tool call's
// arguments, an http answer's stored fields and a state's `on_enter.set`; every template reads
// them as one frozen record, rebuilt only after a change.
import type { VariableValue } from './template.ts';

export class FlowVariables {
  readonly #values = new Map<string, VariableValue>();
  #view: Readonly<Record<string, VariableValue>> | null = null;

  /** The session's start `context`; a value that cannot be a variable is left out. */
  constructor(context: Record<string, unknown> = {}) {
    for (const [name, value] of Object.entries(context)) {
      const variable = contextValueToVariable(value);
      if (variable !== undefined) this.#values.set(name, variable);
    }
  }

  /** A frozen copy; it does not change when the variables do. */
  get current(): Readonly<Record<string, VariableValue>> {
    this.#view ??= Object.freeze(Object.fromEntries(this.#values));
    return this.#view;
  }

  set(name: string, value: VariableValue): void {
    this.#values.set(name, value);
    this.#view = null;
  }
}

function contextValueToVariable(value: unknown): VariableValue | undefined {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return value;
    case 'bigint':
      return value.toString();
    case 'object':
      // Objects and arrays are kept as JSON so a prompt can still quote them.
      if (value === null) return undefined;
      try {
        return JSON.stringify(value);
      } catch {
        return undefined; // cyclic: cannot come from a JSON request body
      }
    default:
      return undefined;
  }
}
