// How many cases each fast-check property tries, for every test file (a vitest setup file).
// VOXFLOW_FC_RUNS sets it: unset (CI), a property tries DEFAULT_PROPERTY_RUNS cases, or the count
// it names with scaledRuns(); VOXFLOW_FC_RUNS=20 npm run test:unit is a quick local pass, and
// VOXFLOW_FC_RUNS=5000 a deep one. Every property goes through the knob: one that named a fixed
// numRuns would ignore it (fast-check lets an explicit count win over this default).
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

/**
 * For a property that needs more (or fewer) cases than the others: `atDefault` cases when the
 * knob is unset, and as many times the knob's count otherwise (at least one). A fuzz of random
 * text names 3,000; with VOXFLOW_FC_RUNS=20 it tries 120.
 */
export function scaledRuns(atDefault: number, env: NodeJS.ProcessEnv = process.env): number {
  return Math.max(1, Math.round((atDefault * propertyRuns(env)) / DEFAULT_PROPERTY_RUNS));
}

fc.configureGlobal({ numRuns: propertyRuns() });
