// Parsing and validation time of a generated 500-state flow, against the bare YAML parse of the
// same text in the same run (the ratio says what validation and positions cost on top of YAML).
import { parseDocument } from 'yaml';
import { parseFlow } from '../../server/flow/parse.ts';
import { applyJsonToYaml } from '../../server/flow/yaml-edit/index.ts';
import { aliasBomb, generateFlowYaml } from '../support/generate-flow.ts';
import { ms, percentile, timeRuns, type BenchRow } from './bench-kit.ts';

export async function run(): Promise<BenchRow[]> {
  const text = generateFlowYaml(500);
  const check = parseFlow(text);
  if (!check.document || check.diagnostics.length > 0) throw new Error('generated flow does not validate cleanly');

  const runs = 40;
  const yamlOnly = await timeRuns(runs, () => parseDocument(text).toJS());
  const full = await timeRuns(runs, () => parseFlow(text));
  const bomb = aliasBomb();
  if (parseFlow(bomb).diagnostics[0]?.code !== 'too_many_aliases') throw new Error('the alias bomb was not refused');
  const refusal = await timeRuns(runs, () => parseFlow(bomb));
  // An edit of one state's prompt and tools, applied onto the YAML text: it should cost about one
  // parse of the document, not the two to four a whole-document rendering would.
  const edited = parseDocument(text).toJS() as { states: Record<string, { agent: { prompt: string; tools: string[] }; tools: Record<string, unknown> }> };
  const state = edited.states.s250!;
  state.agent.prompt = 'A new prompt.';
  state.agent.tools.push('extra');
  state.tools.extra = { description: 'More.' };
  const edit = await timeRuns(runs, () => applyJsonToYaml(text, edited));
  const kib = (new TextEncoder().encode(text).length / 1024).toFixed(0);
  const how = `500 states, ${kib} KiB, median and p95 of ${runs} runs after 3 warm-ups`;
  return [
    { name: 'parseFlow (YAML + structure + semantics + positions)', value: `${ms(percentile(full, 50))} p50, ${ms(percentile(full, 95))} p95`, how },
    { name: 'yaml parseDocument + toJS alone', value: `${ms(percentile(yamlOnly, 50))} p50`, how },
    { name: 'parseFlow / bare YAML', value: `${(percentile(full, 50) / percentile(yamlOnly, 50)).toFixed(2)}×`, how: 'ratio of medians, same run' },
    {
      name: 'applyJsonToYaml, one state edited / bare YAML parse',
      value: `${(percentile(edit, 50) / percentile(yamlOnly, 50)).toFixed(2)}× (${ms(percentile(edit, 50))} p50)`,
      target: '< 1.8×',
      how: 'ratio of medians, same run: a prompt, a listed tool and its definition added to one of 500 states',
    },
    {
      name: 'parseFlow refuses a nested alias bomb',
      value: `${ms(percentile(refusal, 50))} p50, ${ms(percentile(refusal, 95))} p95`,
      target: '< 5 s',
      how: `9 levels of 10 aliases (a billion strings expanded), ${runs} runs after 3 warm-ups`,
    },
  ];
}
