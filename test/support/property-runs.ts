// How many cases each fast-check property tries, for every test file (a vitest setup file).
// VOXFLOW_FC_RUNS sets it: unset (CI), a property tries DEFAULT_PROPERTY_RUNS cases, or the count
// it names with scaledRuns(); VOXFLOW_FC_RUNS=20 npm run test:unit is a quick local pass, and
// VOXFLOW_FC_RUNS=5000 a deep one. Every property goes through the knob: one that named a fixed
// numRuns would ignore it (fast-check lets an explicit count win over this default).
import fc from 'fast-check';

/**
 * Cases per property when VOXFLOW_FC_RUNS is not set (`npm test`, CI): half of what they ran
 * until the suite outgrew its time on two cores. The soak bench (`npm run bench -- soaks`) runs
 * twenty times as many.
 */
export const DEFAULT_PROPERTY_RUNS = 250;
/** The count a property's own figure in scaledRuns() is written for. */
const REFERENCE_RUNS = 500;

export function propertyRuns(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.VOXFLOW_FC_RUNS?.trim();
  if (!text) return DEFAULT_PROPERTY_RUNS;
  const runs = Number(text);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`VOXFLOW_FC_RUNS must be a whole number of runs, at least 1; it is "${text}"`);
  return runs;
}

/**
 * For a property that needs more (or fewer) cases than the others: `atReference` cases where the
 * others try 500, scaled with the knob (at least one). A fuzz of random text names 3,000: it
 * tries 1,500 in `npm test`, 120 with VOXFLOW_FC_RUNS=20.
 */
export function scaledRuns(atReference: number, env: NodeJS.ProcessEnv = process.env): number {
  return Math.max(1, Math.round((atReference * propertyRuns(env)) / REFERENCE_RUNS));
}

fc.configureGlobal({ numRuns: propertyRuns() });
