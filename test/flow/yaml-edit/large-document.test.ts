// A generated 500-state flow: an edit confined to a few entries changes only those lines. What
// it costs against one parse of the document is a bench row (test/bench/flow-parse.bench.ts).

import { describe, expect, it } from 'vitest';
import { applyJsonToYaml } from '../../../server/flow/yaml-edit/index.ts';
import { generateFlowYaml } from '../../support/generate-flow.ts';
import { changes, dataOf } from './hand-written-flow.ts';

describe('applyJsonToYaml on a large flow', () => {
  it('edits one state of a 500-state document and touches only its lines', () => {
    const yaml = generateFlowYaml(500);
    const data = dataOf(yaml);
    data.states.s250.agent.prompt = 'A new prompt.';
    data.states.s250.agent.tools.push('extra');
    data.states.s250.tools.extra = { description: 'More.' };
    const out = applyJsonToYaml(yaml, data);
    expect(dataOf(out)).toEqual(data);
    expect(changes(yaml, out).removed).toHaveLength(2);
  });
});
