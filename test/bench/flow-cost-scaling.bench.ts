// The flow model's cost grows with the document, not with its square: a document twice as big
// takes about twice as long to parse, convert or edit. Validating a 255 KiB upload once took
// 1.6–2.9 s; each shape below once exposed a cost that grew with the square (the yaml library's
// duplicate-key check, looking up each diagnostic's place, finding each placeholder).
//
// A ratio, so a bench row and not a test: each is taken within one run, as the best of several
// interleaved runs per size in CPU time of this process (time the machine gives other processes
// does not count). Linear code measures about 2; a square cost measured 3 to 6 at these sizes.
import { parseFlow } from '../../server/flow/parse.ts';
import { applyJsonToYaml, yamlToJson } from '../../server/flow/yaml-edit/index.ts';
import { manyPlaceholdersYaml, manyTopLevelKeysYaml, oneLineStatesYaml, statesWithWarningsYaml } from '../support/one-line-flows.ts';
import type { BenchRow } from './bench-kit.ts';

const MAX_RATIO = 3;
const RUNS = 5;
/**
 * A burst of other work can land on every run of one size: the row keeps the best of three tries.
 * A square cost shows on every try; one try ranged 1.8–3.8× between runs beside other work here.
 */
const TRIES = 3;

/** CPU time this process has used, in ms. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** The best CPU time of each job over RUNS interleaved runs, so both see the same machine. */
function bestOf(small: () => unknown, large: () => unknown): [number, number] {
  let [smallMs, largeMs] = [Infinity, Infinity];
  for (let run = 0; run < RUNS; run++) {
    let start = cpuMs();
    small();
    smallMs = Math.min(smallMs, cpuMs() - start);
    start = cpuMs();
    large();
    largeMs = Math.min(largeMs, cpuMs() - start);
  }
  return [smallMs, largeMs];
}

type StatesData = { states: Record<string, { agent: { prompt: string } }> };

/** The document's data with every state's prompt changed: the largest edit the studio makes. */
function everyPromptEdited(yaml: string): StatesData {
  const data = yamlToJson(yaml) as StatesData;
  for (const state of Object.values(data.states)) state.agent.prompt += ' Then wait.';
  return data;
}

function row(name: string, small: () => unknown, large: () => unknown): BenchRow {
  const tries = Array.from({ length: TRIES }, () => bestOf(small, large));
  const [smallMs, largeMs] = tries.reduce((best, t) => (t[1] / t[0] < best[1] / best[0] ? t : best));
  return {
    name: `${name}: twice the size`,
    value: `${(largeMs / smallMs).toFixed(2)}× (${smallMs.toFixed(1)} → ${largeMs.toFixed(1)} ms)`,
    target: `< ${MAX_RATIO}×`,
    how: `best CPU time of ${RUNS} interleaved runs per size in this process; the best of ${TRIES} tries`,
  };
}

export async function run(): Promise<BenchRow[]> {
  const shapes: Array<[string, (n: number) => string, number]> = [
    ['1,000 one-line states', (n) => oneLineStatesYaml(n), 1000],
    ['250 states with 300-character prompts', (n) => oneLineStatesYaml(n, 300), 250],
    ['2,500 states with three warnings each', statesWithWarningsYaml, 2500],
    ['12,000 keys in one map', manyTopLevelKeysYaml, 12_000],
    ['10,000 placeholders in one prompt', manyPlaceholdersYaml, 10_000],
  ];
  const rows: BenchRow[] = [];
  for (const [what, make, n] of shapes) {
    const [small, large] = [make(n), make(2 * n)];
    if (parseFlow(large).diagnostics.some((d) => d.code === 'document_too_large')) throw new Error(`${what}: twice the size is refused as too large`);
    rows.push(row(`parseFlow, ${what}`, () => parseFlow(small), () => parseFlow(large)));
  }
  for (const [what, make, n] of shapes.slice(0, 2)) {
    const [small, large] = [make(n), make(2 * n)];
    rows.push(row(`yamlToJson, ${what}`, () => yamlToJson(small), () => yamlToJson(large)));
  }
  const [small, large] = [oneLineStatesYaml(500), oneLineStatesYaml(1000)];
  const [smallEdit, largeEdit] = [everyPromptEdited(small), everyPromptEdited(large)];
  rows.push(row('applyJsonToYaml, every prompt of 500 states edited', () => applyJsonToYaml(small, smallEdit), () => applyJsonToYaml(large, largeEdit)));
  const stored = oneLineStatesYaml(1);
  const [fewNew, manyNew] = [yamlToJson(oneLineStatesYaml(500)), yamlToJson(oneLineStatesYaml(1000))];
  rows.push(row('applyJsonToYaml, 500 new states onto a small flow', () => applyJsonToYaml(stored, fewNew), () => applyJsonToYaml(stored, manyNew)));
  return rows;
}
