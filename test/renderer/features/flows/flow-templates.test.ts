import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FLOW_TEMPLATES, GUESSING_GAME_YAML, blankFlowYaml, documentIdFromName, templateById } from '../../../../renderer/src/features/flows/flow-templates.ts';
import { parseFlow } from '../../../../server/flow/parse.ts';

describe('the templates a new flow starts from', () => {
  it('creates the guessing game byte for byte from the resource file', () => {
    const file = readFileSync(new URL('../../../../resources/flows/guessing-game.yaml', import.meta.url), 'utf8');
    expect(GUESSING_GAME_YAML).toBe(file);
    expect(templateById('guessing-game').yamlFor('Anything')).toBe(file);
  });

  it.each(['Untitled flow', 'Order status: refunds & returns', '   ', 'Ünïcödé 名前', '# not a comment\nid: injected'])(
    'makes a blank flow named %j that validates with no errors and no warnings',
    (name) => {
      const { document, diagnostics } = parseFlow(blankFlowYaml(name));
      expect(diagnostics).toEqual([]);
      expect(document?.id).toBe(documentIdFromName(name));
      expect(document?.initial_state).toBe('start');
    },
  );

  it('offers the guessing game first, then blank', () => {
    expect(FLOW_TEMPLATES.map((t) => t.id)).toEqual(['guessing-game', 'blank']);
  });
});
