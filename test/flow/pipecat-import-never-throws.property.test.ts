import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { importPipecatFlow } from '../../server/flow/pipecat/index.ts';
import { scaledRuns } from '../support/property-runs.ts';

// Whatever a FlowConfig file holds, the import never throws: it refuses it with a reason, or
// gives a flow the validator accepts (the API and the studio rely on both).
const word = fc.constantFrom('start', 'end', 'a b', '', 'x-1', '__proto__', 'constructor', '{name}', 'ñ', 'name', 'type');
const loose = fc.oneof(fc.anything({ maxDepth: 2 }), word);
const property = fc.record({ type: fc.oneof(fc.constantFrom('string', 'integer', 'array', 'object', 'null'), loose), description: loose, enum: fc.oneof(fc.array(loose, { maxLength: 3 }), loose) }, { requiredKeys: [] });
const fn = fc.oneof(
  fc.record({ name: word, description: loose, properties: fc.dictionary(word, property, { maxKeys: 3 }), required: fc.oneof(fc.array(word), loose), transition_to: word, handler: loose }, { requiredKeys: [] }),
  fc.record({ type: fc.constant('function'), function: fc.record({ name: word, parameters: fc.record({ properties: fc.dictionary(word, property, { maxKeys: 2 }) }), next_node: word }, { requiredKeys: [] }) }),
  fc.record({ function_declarations: fc.array(fc.record({ name: word, parameters: fc.constant(null), next_node_id: word }), { maxLength: 2 }) }),
  loose,
);
const message = fc.oneof(fc.record({ role: fc.constantFrom('system', 'user', 'assistant'), content: fc.oneof(fc.string({ maxLength: 20 }), loose) }), loose);
const action = fc.oneof(fc.record({ type: fc.constantFrom('tts_say', 'end_conversation', 'function', 'other'), text: loose, handler: loose }, { requiredKeys: ['type'] }), loose);
const node = fc.record(
  {
    role_messages: fc.oneof(fc.array(message, { maxLength: 2 }), loose),
    role_message: loose,
    task_messages: fc.oneof(fc.array(message, { maxLength: 3 }), loose),
    functions: fc.oneof(fc.array(fn, { maxLength: 3 }), loose),
    pre_actions: fc.oneof(fc.array(action, { maxLength: 2 }), loose),
    post_actions: fc.oneof(fc.array(action, { maxLength: 2 }), loose),
    context_strategy: fc.oneof(fc.record({ strategy: fc.constantFrom('APPEND', 'reset', 'RESET_WITH_SUMMARY', 'x') }), loose),
    respond_immediately: loose,
  },
  { requiredKeys: [] },
);
const flowConfig = fc.record({ initial_node: fc.oneof(word, loose), nodes: fc.dictionary(word, fc.oneof(node, loose), { maxKeys: 4 }) }, { requiredKeys: ['nodes'] });

describe('importing any FlowConfig-shaped file', () => {
  it('never throws, and either refuses it with a reason or gives a flow without errors', () => {
    fc.assert(
      fc.property(flowConfig, fc.boolean(), (config, asYaml) => {
        let text: string;
        try {
          text = JSON.stringify(config);
        } catch {
          return;
        }
        if (text === undefined) return;
        const result = importPipecatFlow(asYaml ? `# as YAML\n${text}` : text);
        if (result.yaml === null) {
          expect(result.diagnostics[0]).toMatchObject({ severity: 'error', code: 'pipecat_not_a_flow_config' });
          return;
        }
        expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
        expect(parseFlow(result.yaml).diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      }),
      { numRuns: scaledRuns(1000) },
    );
  });
});
