// The flow model's cost grows with the document, not with its square: a document twice as big
// takes about twice as long to parse, convert or edit. Validating a 255 KiB upload once took
// 1.6–2.9 s; the shapes below each exposed a cost that grew with the square (the yaml
// library's duplicate-key check, looking up each diagnostic's place, finding each placeholder).
//
// Each ratio is taken within one run, from the best of several interleaved runs per size, in
// CPU time of this process, so that time the machine gives other processes does not count; a
// ratio over the bound is measured again (three tries), since a burst of other work can still
// land on every run of one size. Linear code measures about 2; a square cost 3 to 6 at these
// sizes, on every try. A try stops as soon as its best times (two runs each at least) are under
// the bound: linear code passes on its second run, which halves this file's CPU (the slowest of
// the unit project: 28 s of CPU alone with five runs every time), while a square cost still has
// every run of every try to show itself.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { applyJsonToYaml, yamlToJson } from '../../server/flow/yaml-edit/index.ts';
import { manyPlaceholdersYaml, manyTopLevelKeysYaml, oneLineStatesYaml, statesWithWarningsYaml } from '../support/one-line-flows.ts';

const MAX_RATIO = 3;

/** CPU time this process has used, in ms. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** The smallest CPU time `job` took so far, updated by one more run of it. */
function timeOnce(job: () => unknown, best: number): number {
  const start = cpuMs();
  job();
  return Math.min(best, cpuMs() - start);
}

/** At least two runs of each, in turns so both see the same machine. */
const MIN_RUNS = 2;

function expectLinear(what: string, small: () => unknown, large: () => unknown, runs = 5): void {
  const tries: string[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    let [smallMs, largeMs] = [Infinity, Infinity];
    for (let run = 0; run < runs; run++) {
      smallMs = timeOnce(small, smallMs);
      largeMs = timeOnce(large, largeMs);
      if (run + 1 >= MIN_RUNS && largeMs / smallMs < MAX_RATIO) return;
    }
    tries.push(`${smallMs.toFixed(1)} ms, then ${largeMs.toFixed(1)} ms (×${(largeMs / smallMs).toFixed(2)})`);
  }
  expect.fail(`${what} at twice the size took more than ${MAX_RATIO} times as long on every try: ${tries.join('; ')}`);
}

type StatesData = { states: Record<string, { agent: { prompt: string } }> };

/** The document's data with every state's prompt changed: the largest edit the studio makes. */
function everyPromptEdited(yaml: string): StatesData {
  const data = yamlToJson(yaml) as StatesData;
  for (const state of Object.values(data.states)) state.agent.prompt += ' Then wait.';
  return data;
}

describe('the flow model on twice the document', () => {
  const shapes: Array<[string, (n: number) => string, number]> = [
    ['1,000 one-line states', (n) => oneLineStatesYaml(n), 1000],
    ['250 states with 300-character prompts', (n) => oneLineStatesYaml(n, 300), 250],
    ['2,500 states with three warnings each', statesWithWarningsYaml, 2500],
    ['12,000 keys in one map', manyTopLevelKeysYaml, 12_000],
    ['10,000 placeholders in one prompt', manyPlaceholdersYaml, 10_000],
  ];

  it.each(shapes)('parseFlow takes about twice as long on twice %s', (what, make, n) => {
    const small = make(n);
    const large = make(2 * n);
    expect(parseFlow(large).diagnostics.some((d) => d.code === 'document_too_large')).toBe(false);
    // The small cases take tens of milliseconds: more runs for the same confidence.
    expectLinear(`parseFlow, ${what}`, () => parseFlow(small), () => parseFlow(large), n === 10_000 ? 10 : 5);
  });

  it.each(shapes.slice(0, 2))('yamlToJson takes about twice as long on twice %s', (what, make, n) => {
    const small = make(n);
    const large = make(2 * n);
    expectLinear(`yamlToJson, ${what}`, () => yamlToJson(small), () => yamlToJson(large));
  });

  it('applyJsonToYaml takes about twice as long to edit every state of twice as many', () => {
    const small = oneLineStatesYaml(500);
    const large = oneLineStatesYaml(1000);
    const smallEdit = everyPromptEdited(small);
    const largeEdit = everyPromptEdited(large);
    expectLinear('applyJsonToYaml, every prompt of 500 states', () => applyJsonToYaml(small, smallEdit), () => applyJsonToYaml(large, largeEdit), 3);
  });

  it('applyJsonToYaml takes about twice as long to write twice as many states onto a small flow', () => {
    const stored = oneLineStatesYaml(1);
    const small = yamlToJson(oneLineStatesYaml(500));
    const large = yamlToJson(oneLineStatesYaml(1000));
    expectLinear('applyJsonToYaml, 500 new states', () => applyJsonToYaml(stored, small), () => applyJsonToYaml(stored, large), 3);
  });
});
