// How many cases each fast-check property tries, for every test file (a vitest setup file).
// CI keeps the full count; VOXFLOW_FC_RUNS=20 npm run test:unit is a quick local pass. A property
// that names its own numRuns keeps it: fast-check lets an explicit count win over this default.
import fc from 'fast-check';

/** Cases per property when VOXFLOW_FC_RUNS is not set (CI): what the studio's form property ran before the knob. */
export const DEFAULT_PROPERTY_RUNS = 500;

export function propertyRuns(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.VOXFLOW_FC_RUNS?.trim();
  if (!text) return DEFAULT_PROPERTY_RUNS;
  const runs = Number(text);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`VOXFLOW_FC_RUNS must be a whole number of runs, at least 1; it is "${text}"`);
  return runs;
}

fc.configureGlobal({ numRuns: propertyRuns() });
