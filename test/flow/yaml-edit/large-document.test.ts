// A generated 500-state flow: an edit confined to a few entries costs about one parse of the
// document, not the four a whole-document rendering would.

import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { applyJsonToYaml } from '../../../server/flow/yaml-edit/index.ts';
import { generateFlowYaml } from '../../support/generate-flow.ts';
import { changes, dataOf } from './hand-written-flow.ts';

describe('applyJsonToYaml on a large flow', () => {
  it('edits a 500-state document in time proportional to parsing it once', () => {
    const yaml = generateFlowYaml(500);
    const data = dataOf(yaml);
    data.states.s250.agent.prompt = 'A new prompt.';
    data.states.s250.agent.tools.push('extra');
    data.states.s250.tools.extra = { description: 'More.' };
    const out = applyJsonToYaml(yaml, data);
    expect(dataOf(out)).toEqual(data);
    expect(changes(yaml, out).removed).toHaveLength(2);
    // Interleaved, best of three: the machine may be busy with other work.
    let parse = Infinity;
    let apply = Infinity;
    for (let i = 0; i < 3; i++) {
      parse = Math.min(parse, timeOf(() => parseDocument(yaml)));
      apply = Math.min(apply, timeOf(() => applyJsonToYaml(yaml, data)));
    }
    // Rendering and re-parsing the whole document would take two to four parses.
    expect(apply).toBeLessThan(parse * 1.8);
  });
});

function timeOf(run: () => void): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}
