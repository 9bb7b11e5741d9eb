// VOXFLOW_FC_RUNS reaches every fast-check property (docs/testing.md): unset, each tries half of
// the count it names for 500; set, the count scales with it. A property that names a fixed numRuns would ignore the
// knob, so none may.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROPERTY_RUNS, propertyRuns, scaledRuns } from '../support/property-runs.ts';

const TEST_DIR = fileURLToPath(new URL('../', import.meta.url));

describe('fast-check run counts', () => {
  it('follow VOXFLOW_FC_RUNS: the default when unset, scaled counts when set, a clear error when not a count', () => {
    expect(propertyRuns({})).toBe(DEFAULT_PROPERTY_RUNS);
    expect(scaledRuns(3000, {})).toBe(1500);
    expect(propertyRuns({ VOXFLOW_FC_RUNS: '20' })).toBe(20);
    expect(scaledRuns(3000, { VOXFLOW_FC_RUNS: '20' })).toBe(120);
    expect(scaledRuns(150, { VOXFLOW_FC_RUNS: '1' })).toBe(1);
    expect(scaledRuns(300, { VOXFLOW_FC_RUNS: '5000' })).toBe(3000);
    expect(() => propertyRuns({ VOXFLOW_FC_RUNS: 'many' })).toThrow(/VOXFLOW_FC_RUNS must be a whole number/);
    expect(() => propertyRuns({ VOXFLOW_FC_RUNS: '0' })).toThrow(/at least 1/);
  });

  it('are never fixed in a test file: every numRuns goes through scaledRuns()', () => {
    const files = readdirSync(TEST_DIR, { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.ts') && !path.startsWith('bench'));
    const fixed = files.filter((path) => /numRuns:\s*\d/.test(readFileSync(`${TEST_DIR}${path}`, 'utf8')));
    expect(fixed).toEqual([]);
    // The check reads the files it should: the properties are there, through the knob.
    expect(files.filter((path) => readFileSync(`${TEST_DIR}${path}`, 'utf8').includes('numRuns: scaledRuns(')).length).toBeGreaterThanOrEqual(5);
  });
});
