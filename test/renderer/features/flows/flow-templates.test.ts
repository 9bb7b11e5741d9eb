import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { APPOINTMENT_BOOKING_YAML, FLOW_TEMPLATES, GUESSING_GAME_YAML, blankFlowYaml, documentIdFromName, templateById } from '../../../../renderer/src/features/flows/flow-templates.ts';
import { parseFlow } from '../../../../server/flow/parse.ts';

describe('the templates a new flow starts from', () => {
  it('creates the guessing game byte for byte from the resource file', () => {
    const file = readFileSync(new URL('../../../../resources/flows/guessing-game.yaml', import.meta.url), 'utf8');
    expect(GUESSING_GAME_YAML).toBe(file);
    expect(templateById('guessing-game').yamlFor('Anything')).toBe(file);
  });

  it('creates the appointment booking byte for byte from the resource file, and it validates with no errors', () => {
    const file = readFileSync(new URL('../../../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8');
    expect(APPOINTMENT_BOOKING_YAML).toBe(file);
    expect(templateById('appointment-booking').yamlFor('Anything')).toBe(file);
    expect(parseFlow(file).diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
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

  it('offers the guessing game first, then the appointment booking, then blank, each with a line saying what it is', () => {
    expect(FLOW_TEMPLATES.map((t) => t.id)).toEqual(['guessing-game', 'appointment-booking', 'blank']);
    for (const template of FLOW_TEMPLATES) expect(template.description.length).toBeGreaterThan(20);
  });
});
