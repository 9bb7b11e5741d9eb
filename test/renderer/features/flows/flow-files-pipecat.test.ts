import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkImportText, pipecatDeclarativeExportFile, pipecatExportFile, pipecatFormatLabel } from '../../../../renderer/src/features/flows/flow-file-checks.ts';
import { flowNameFromFileName } from '../../../../renderer/src/features/flows/flow-files.ts';
import { parseFlow } from '../../../../server/flow/parse.ts';

const GUESSING_GAME = readFileSync(new URL('../../../../resources/flows/guessing-game.yaml', import.meta.url), 'utf8');
const FOOD_ORDERING = readFileSync(new URL('../../../flow/pipecat/food-ordering.flowconfig.json', import.meta.url), 'utf8');
const PIZZA_ORDER = readFileSync(new URL('../../../flow/pipecat/pizza-order.flowconfig.yaml', import.meta.url), 'utf8');

describe('importing a file on the flows screen', () => {
  it('takes a Voxflow flow as it is', () => {
    const check = checkImportText(GUESSING_GAME);
    expect(check).toMatchObject({ source: 'voxflow', yaml: GUESSING_GAME, errors: [] });
  });

  it('converts a Pipecat FlowConfig and gives its diagnostics, and a flow the validator accepts', () => {
    const check = checkImportText(FOOD_ORDERING);
    expect(check.source).toBe('pipecat');
    expect(check.errors).toEqual([]);
    expect(check.warnings.map((d) => d.code)).toContain('pipecat_handler_not_run');
    expect(parseFlow(check.yaml!).document?.initial_state).toBe('start');
  });

  it('names the format it read: the YAML FlowConfig of Pipecat Flows 1.x, or one from before 1.0', () => {
    const declarative = checkImportText(PIZZA_ORDER);
    expect(declarative).toMatchObject({ source: 'pipecat', pipecatFormat: 'declarative', errors: [] });
    expect(pipecatFormatLabel(declarative.pipecatFormat)).toBe('A Pipecat Flows 1.x YAML FlowConfig');
    expect(parseFlow(declarative.yaml!).document?.initial_state).toBe('greet');
    expect(pipecatFormatLabel(checkImportText(FOOD_ORDERING).pipecatFormat)).toBe('A Pipecat Flows FlowConfig from before 1.0');
  });

  it('names a flow after a FlowConfig file without its extensions', () => {
    expect(flowNameFromFileName('food_ordering.json')).toBe('Food ordering');
    expect(flowNameFromFileName('guessing-game.pipecat.json')).toBe('Guessing game');
  });
});

describe('exporting from the editor as a Pipecat FlowConfig', () => {
  it('names the file after the flow and says what was not carried', () => {
    const exported = pipecatExportFile('Guessing game', GUESSING_GAME);
    if (!exported.ok) throw new Error('the guessing game has errors');
    expect(exported.baseName).toBe('guessing-game.pipecat');
    expect(JSON.parse(exported.json).initial_node).toBe('setup');
    expect(exported.notCarried.some((line) => line.includes('speech cue of "begin_game"'))).toBe(true);
  });

  it('exports the YAML FlowConfig of Pipecat Flows 1.x as one YAML file that comes back to the same tools', () => {
    const exported = pipecatDeclarativeExportFile('Guessing game', GUESSING_GAME);
    if (!exported.ok) throw new Error('the guessing game has errors');
    expect(exported.fileName).toBe('guessing-game.pipecat.yaml');
    expect(exported.notCarried.some((line) => line.includes('speech cue of "begin_game"'))).toBe(true);
    const back = checkImportText(exported.yaml);
    expect(back.pipecatFormat).toBe('declarative');
    expect(parseFlow(back.yaml!).document!.states.setup!.tools).toEqual(parseFlow(GUESSING_GAME).document!.states.setup!.tools);
    expect(pipecatDeclarativeExportFile('Broken', GUESSING_GAME.replace('initial_state: setup', 'initial_state: nowhere')).ok).toBe(false);
  });

  it("refuses a draft with errors and gives the errors' lines", () => {
    const exported = pipecatExportFile('Broken', GUESSING_GAME.replace('initial_state: setup', 'initial_state: nowhere'));
    expect(exported.ok).toBe(false);
    if (!exported.ok) expect(exported.errors.map((d) => d.code)).toEqual(['unknown_initial_state']);
  });
});
