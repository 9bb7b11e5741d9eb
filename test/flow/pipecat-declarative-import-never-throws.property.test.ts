import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseFlow } from '../../server/flow/parse.ts';
import { importPipecatFlow } from '../../server/flow/pipecat/index.ts';
import { scaledRuns } from '../support/property-runs.ts';

// Whatever a declarative FlowConfig file holds (the YAML of Pipecat Flows 1.x, with or without a
// `voxflow:` comment, well-formed or not), the import never throws: it refuses the file with a
// reason, or gives a flow the validator accepts.
const word = fc.constantFrom('start', 'end', 'a b', '', 'x-1', '__proto__', 'constructor', '{name}', '{{ name }}', 'ñ', 'name', 'next_state', 'type');
const loose = fc.oneof(fc.anything({ maxDepth: 2 }), word);
const branch = fc.record({ field: fc.oneof(word, loose), cases: fc.oneof(fc.dictionary(word, fc.oneof(word, loose), { maxKeys: 3 }), loose), default: fc.oneof(word, loose), extra: loose }, { requiredKeys: [] });
const fn = fc.oneof(fc.record({ name: fc.oneof(word, loose), transition_to: fc.oneof(word, branch, loose), description: loose }, { requiredKeys: [] }), loose);
const message = fc.oneof(fc.record({ role: fc.constantFrom('developer', 'system', 'user', 'assistant'), content: fc.oneof(fc.string({ maxLength: 20 }), word, loose) }), loose);
const action = fc.oneof(fc.record({ type: fc.constantFrom('tts_say', 'end_conversation', 'function', 'other'), text: loose, handler: loose }, { requiredKeys: ['type'] }), loose);
const node = fc.record(
  {
    task_messages: fc.oneof(fc.array(message, { maxLength: 3 }), loose),
    role_message: fc.oneof(fc.string({ maxLength: 20 }), loose),
    functions: fc.oneof(fc.array(fn, { maxLength: 3 }), loose),
    pre_actions: fc.oneof(fc.array(action, { maxLength: 2 }), loose),
    post_actions: fc.oneof(fc.array(action, { maxLength: 2 }), loose),
    context_strategy: fc.oneof(fc.constantFrom('append', 'reset', 'RESET'), loose),
    respond_immediately: fc.oneof(fc.boolean(), loose),
  },
  { requiredKeys: [] },
);
const flowConfig = fc.record(
  { initial_node: fc.oneof(word, loose), nodes: fc.dictionary(word, fc.oneof(node, loose), { maxKeys: 4 }), global_functions: fc.oneof(fc.array(fn, { maxLength: 2 }), loose) },
  { requiredKeys: ['nodes'] },
);
const parameter = fc.record({ type: fc.oneof(fc.constantFrom('string', 'integer', 'array'), loose), required: loose, enum: loose }, { requiredKeys: [] });
const companionTool = fc.oneof(
  fc.record({ description: fc.oneof(fc.string({ maxLength: 10 }), loose), parameters: fc.oneof(fc.dictionary(word, parameter, { maxKeys: 2 }), loose), http: loose, speech_cue: loose, colour: loose }, { requiredKeys: [] }),
  loose,
);
const companion = fc.oneof(
  fc.record({ functions: fc.oneof(fc.dictionary(word, companionTool, { maxKeys: 3 }), loose), node_functions: fc.oneof(fc.dictionary(word, fc.dictionary(word, companionTool, { maxKeys: 2 }), { maxKeys: 2 }), loose) }, { requiredKeys: [] }),
  loose,
);

/** The `# `-prefixed block a file may start with; sometimes cut short or not YAML at all. */
function commentOf(block: unknown, raw: string, broken: boolean): string {
  let yaml: string;
  try {
    yaml = broken ? `voxflow:\n  functions: ${raw}` : stringify({ voxflow: block });
  } catch {
    return '';
  }
  return `${yaml
    .trimEnd()
    .split('\n')
    .map((line) => (line === '' ? '#' : `# ${line}`))
    .join('\n')}\n`;
}

describe('importing any declarative-FlowConfig-shaped file', () => {
  it('never throws, and either refuses it with a reason or gives a flow without errors', () => {
    fc.assert(
      fc.property(flowConfig, fc.option(companion), fc.string({ maxLength: 20 }), fc.boolean(), (config, block, raw, broken) => {
        let body: string;
        try {
          body = stringify(config);
        } catch {
          return;
        }
        const text = `${block === null ? '' : commentOf(block, raw, broken)}${body}`;
        const result = importPipecatFlow(text);
        if (result.yaml === null) {
          expect(result.diagnostics[0]).toMatchObject({ severity: 'error', code: 'pipecat_not_a_flow_config' });
          return;
        }
        expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
        for (const d of result.diagnostics) expect(d.line).toBeGreaterThanOrEqual(1);
        expect(parseFlow(result.yaml).diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      }),
      { numRuns: scaledRuns(600) },
    );
  });

  it('never throws on arbitrary text that starts like one', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.constantFrom('', '# voxflow:\n', 'initial_node: a\nnodes:\n', '# voxflow:\n#   functions:\n'), (tail, head) => {
        const result = importPipecatFlow(`${head}${tail}`);
        if (result.yaml !== null) expect(parseFlow(result.yaml).diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
        else expect(result.diagnostics[0]!.severity).toBe('error');
      }),
      { numRuns: scaledRuns(400) },
    );
  });
});
