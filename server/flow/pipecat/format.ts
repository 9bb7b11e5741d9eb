// Which Pipecat Flows shape a parsed file is (docs/flows.md, "Pipecat Flows"):
// - `declarative`: the YAML FlowConfig of `pipecat.flows` (Pipecat Flows 1.x): functions named
//   only, `{name, transition_to}`, their schemas being the Python functions bound at run time.
// - `static`: the FlowConfig of Pipecat Flows before 1.0: functions carry their schemas.
// - `editor`: the Pipecat Flows editor's JSON (`meta` and a list of `nodes`).
//
// A map of nodes with `initial_node` is read as `static` only when it has a sign of the old
// format and none of the new one. Signs of the old format: a node's `role_messages`, a
// `context_strategy` given as a map (`{strategy: RESET}`), a function with a schema or code
// (`type`/`function`, `function_declarations`, `description`, `properties`, `parameters`,
// `input_schema`, `required`, `handler`, `transition_callback`, `next_node`). Signs of the new
// format: top-level `global_functions`, a `transition_to` that is a Branch map, and
// `context_strategy` as the text `append` or `reset`. A file with neither (a flow without
// functions reads the same either way) is `declarative`; one with both is `declarative` too,
// and the place of the first old sign is returned so the import says why its schema is left out.
import { isObject, type Path } from './read-functions.ts';

export type PipecatFormat = 'declarative' | 'static' | 'editor';

export interface FormatOf {
  format: PipecatFormat;
  /** Set for a declarative read of a file that also has a sign of the old format: where the first is. */
  mixedAt: Path | null;
}

const OLD_FUNCTION_KEYS = ['type', 'function', 'function_declarations', 'description', 'properties', 'parameters', 'input_schema', 'required', 'handler', 'transition_callback', 'next_node'];

/** Whether parsed data has the shape of a FlowConfig (either format) or of the Pipecat Flows editor's JSON. */
export function isPipecatFlowData(data: unknown): boolean {
  if (!isObject(data) || 'states' in data) return false;
  if (isObject(data.nodes) && 'initial_node' in data) return true;
  return Array.isArray(data.nodes) && isObject(data.meta);
}

/** The format of data that `isPipecatFlowData` accepts. */
export function pipecatFormatOf(data: Record<string, unknown>): FormatOf {
  if (Array.isArray(data.nodes)) return { format: 'editor', mixedAt: null };
  let oldSign: Path | null = null;
  let newSign = 'global_functions' in data;
  const nodes = isObject(data.nodes) ? data.nodes : {};
  for (const [name, node] of Object.entries(nodes)) {
    if (!isObject(node)) continue;
    const at: Path = ['nodes', name];
    if ('role_messages' in node) oldSign ??= [...at, 'role_messages'];
    if (isObject(node.context_strategy)) oldSign ??= [...at, 'context_strategy'];
    if (node.context_strategy === 'append' || node.context_strategy === 'reset') newSign = true;
    if (!Array.isArray(node.functions)) continue;
    node.functions.forEach((fn, index) => {
      if (!isObject(fn)) return;
      const key = OLD_FUNCTION_KEYS.find((k) => k in fn);
      if (key !== undefined) oldSign ??= [...at, 'functions', index, key];
      if (isObject(fn.transition_to)) newSign = true;
    });
  }
  if (oldSign !== null && !newSign) return { format: 'static', mixedAt: null };
  return { format: 'declarative', mixedAt: oldSign };
}
