import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkFlowText } from '../../../../renderer/src/features/flows/flow-file-checks.ts';
import {
  diagnosticsFromDetails,
  excerptAround,
  flowNameFromFileName,
  flowNameProblem,
  uniqueName,
  yamlFileName,
} from '../../../../renderer/src/features/flows/flow-files.ts';
import { parseFlow } from '../../../../server/flow/parse.ts';

const GUESSING_GAME = readFileSync(new URL('../../../../resources/flows/guessing-game.yaml', import.meta.url), 'utf8');

describe('names on the flows screen', () => {
  it('suggests the next free name when a flow already has it, ignoring case', () => {
    expect(uniqueName('Guessing game', [])).toBe('Guessing game');
    expect(uniqueName('Guessing game', ['guessing game'])).toBe('Guessing game 2');
    expect(uniqueName('Guessing game', ['Guessing game', 'Guessing game 2', 'Other'])).toBe('Guessing game 3');
  });

  it('turns a file name into a readable flow name', () => {
    expect(flowNameFromFileName('guessing-game.yaml')).toBe('Guessing game');
    expect(flowNameFromFileName('C:\\flows\\order_status.v2.yml')).toBe('Order status v2');
    expect(flowNameFromFileName('.yaml')).toBe('Imported flow');
  });

  it('exports a flow under a file name every OS accepts', () => {
    expect(yamlFileName('Guessing game')).toBe('guessing-game.yaml');
    expect(yamlFileName('Café: orders / refunds?')).toBe('cafe-orders-refunds.yaml');
    expect(yamlFileName('???')).toBe('new-flow.yaml');
  });

  it('refuses an empty or over-long name with a sentence for the field', () => {
    expect(flowNameProblem('  ')).toMatch(/needs a name/);
    expect(flowNameProblem('x'.repeat(201))).toMatch(/200/);
    expect(flowNameProblem(' Fine ')).toBeNull();
  });
});

describe('checking a YAML file before import', () => {
  it('finds no errors in the guessing game', () => {
    expect(checkFlowText(GUESSING_GAME).errors).toEqual([]);
  });

  it('reports an error with the line it is on, as the server would', () => {
    const broken = GUESSING_GAME.replace('initial_state: setup', 'initial_state: nowhere');
    const { errors } = checkFlowText(broken);
    expect(errors.map((e) => e.code)).toContain('unknown_initial_state');
    const line = broken.split('\n').findIndex((l) => l.startsWith('initial_state:')) + 1;
    expect(errors.find((e) => e.code === 'unknown_initial_state')!.line).toBe(line);
  });

  it('shows the lines around a problem with the problem line marked', () => {
    expect(excerptAround('a\nb\nc\nd', 3)).toEqual([
      { number: 2, text: 'b', marked: false },
      { number: 3, text: 'c', marked: true },
      { number: 4, text: 'd', marked: false },
    ]);
    expect(excerptAround('only', 1).map((l) => l.number)).toEqual([1]);
  });

  it("reads the server's 422 diagnostics and ignores details of another shape", () => {
    const { diagnostics } = parseFlow('id: [');
    expect(diagnosticsFromDetails(diagnostics)).toEqual(diagnostics);
    expect(diagnosticsFromDetails([{ field: 'name', message: 'must not be empty' }])).toEqual([]);
    expect(diagnosticsFromDetails(null)).toEqual([]);
  });
});
