// The flow panel's "Outcome & success" edits: each becomes YAML the validator accepts (or flags as
// typed YAML would be), keeps the text's comments, and an emptied section leaves no key behind.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { readOutcome, setOutcomeField, setSuccessCriteria } from '../../../../../renderer/src/features/editor/document/operations-outcome.ts';
import * as ops from '../../../../../renderer/src/features/editor/document/operations.ts';
import { parseFlow } from '../../../../../server/flow/parse.ts';

const TEXT = readFileSync(new URL('../../../../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8');
const BOOKING = parse(TEXT);
const diagnosticsOf = (data: unknown) => parseFlow(stringify(data)).diagnostics.filter((d) => d.severity === 'error');

describe('outcome fields and success criteria in the flow panel', () => {
  it('are written as settings.outcome and settings.success the validator accepts, and read back', () => {
    let data: any = setOutcomeField(BOOKING, 'booked', { type: 'boolean', required: true });
    data = setOutcomeField(data, 'seating', { type: 'enum', values: ['table', ' terrace', ''] });
    data = setOutcomeField(data, 'slot', { description: 'The time booked' });
    data = setSuccessCriteria(data, [
      { kind: 'outcome', value: 'booked == true' },
      { kind: 'reached', value: Object.keys(BOOKING.states)[0]! },
      { kind: 'transferred', value: 'false' },
      { kind: 'judge', value: 'The caller got a slot' },
    ]);
    expect(data.settings.outcome).toEqual({
      booked: { type: 'boolean', required: true },
      seating: { type: 'enum', values: ['table', 'terrace'] },
      slot: { type: 'string', description: 'The time booked' },
    });
    expect(data.settings.success[2]).toEqual({ transferred: false });
    expect(diagnosticsOf(data)).toEqual([]);
    const read = readOutcome(data);
    expect(read.fields.map((f) => [f.name, f.type, f.required])).toEqual([['booked', 'boolean', true], ['seating', 'enum', false], ['slot', 'string', false]]);
    expect(read.criteria.map((c) => c.kind)).toEqual(['outcome', 'reached', 'transferred', 'judge']);
  });

  it('drops an enum’s values with its type, and flags a criterion on a field that is not there', () => {
    let data: any = setOutcomeField(BOOKING, 'seating', { type: 'enum', values: ['table'] });
    data = setOutcomeField(data, 'seating', { type: 'string' });
    expect(data.settings.outcome.seating).toEqual({ type: 'string' });
    data = setSuccessCriteria(data, [{ kind: 'outcome', value: 'paid == true' }]);
    expect(diagnosticsOf(data).map((d) => d.code)).toEqual(['invalid_success_criterion']);
  });

  it('leaves no key behind once emptied, and keeps the text’s comments', () => {
    const added = setOutcomeField(BOOKING, 'booked', { type: 'boolean' });
    const removed: any = setSuccessCriteria(setOutcomeField(added, 'booked', null), []);
    expect(removed.settings).toEqual(BOOKING.settings);
    const written = ops.applyEditToText(TEXT, BOOKING, (d) => setOutcomeField(d, 'booked', { type: 'boolean', required: true }))!;
    expect(written.text).toContain('# Appointment booking for a dental practice');
    expect(written.text).toMatch(/outcome:\n\s+booked:\n\s+type: boolean\n\s+required: true/);
  });
});
