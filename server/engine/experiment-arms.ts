// Which arm of a running experiment a new session gets (docs/api.md#experiments). With a caller id
// (the number a phone call comes from or goes to, or `metadata.caller_id` on POST /v1/sessions)
// the choice is a hash of the experiment id and the caller id laid onto the weights: the same
// caller always gets the same arm of that experiment, on every node and after restarts, with
// nothing stored. Without one it is random by weight.
import { createHash, randomInt } from 'node:crypto';
import type { ExperimentArm } from '../store/store.ts';

/** 48 bits of the hash: uniform enough over any sum of weights an experiment takes. */
const HASH_SPACE = 2 ** 48;

export function chooseArm(experimentId: string, arms: readonly ExperimentArm[], callerId: string | null): number {
  const total = arms.reduce((sum, arm) => sum + arm.weight, 0);
  if (arms.length === 0 || total <= 0) throw new Error('an experiment has arms with positive weights');
  let point: number;
  if (callerId === null) {
    point = randomInt(total);
  } else {
    const digest = createHash('sha256').update(`${experimentId}\n${callerId}`).digest();
    point = Math.floor((digest.readUIntBE(0, 6) / HASH_SPACE) * total);
  }
  for (const arm of arms) {
    if (point < arm.weight) return arm.version;
    point -= arm.weight;
  }
  return arms.at(-1)!.version;
}

/** The caller id a session is known by: trimmed text, or none. */
export function callerIdOf(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}
