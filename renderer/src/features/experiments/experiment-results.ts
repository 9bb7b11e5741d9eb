// How the experiments screen words an arm's results: a rate with its 95 % interval, durations and
// costs, and which arms' intervals do not overlap (a difference the calls so far show).
import type { ExperimentArmResults } from '../../lib/api-types.ts';

const percent = (value: number) => `${Math.round(value * 100)} %`;

/** "62 % (48–75 %)", or a dash while no call was a success or a failure. */
export function rateText(rate: ExperimentArmResults['success']['rate']): string {
  if (!rate) return '—';
  return `${percent(rate.rate)} (${Math.round(rate.low * 100)}–${Math.round(rate.high * 100)} %)`;
}

export function durationText(seconds: number | null): string {
  if (seconds === null) return '—';
  const whole = Math.round(seconds);
  return whole >= 60 ? `${Math.floor(whole / 60)} min ${whole % 60} s` : `${whole} s`;
}

export function costText(cents: number | null): string {
  return cents === null ? '—' : `${(cents / 100).toLocaleString('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 3 })}`;
}

/**
 * The arm whose interval lies wholly above every other arm's: the one the calls so far say is
 * better. Null while the intervals overlap (no difference shown yet) or an arm has no rate.
 */
export function clearLeader(arms: readonly ExperimentArmResults[]): number | null {
  if (arms.length < 2 || arms.some((arm) => arm.success.rate === null)) return null;
  for (const arm of arms) {
    if (arms.every((other) => other === arm || other.success.rate!.high < arm.success.rate!.low)) return arm.version;
  }
  return null;
}

/** The states, most reached first, as "state 80 %". */
export function statesText(states: ExperimentArmResults['states']): string {
  const entries = Object.entries(states).sort((a, b) => b[1].share - a[1].share);
  return entries.length === 0 ? '—' : entries.map(([state, { share }]) => `${state} ${percent(share)}`).join(', ');
}

/** Each outcome field: "booked: true 6, false 2", or "slot: 8 given". */
export function outcomesText(outcomes: ExperimentArmResults['outcomes']): string {
  const entries = Object.entries(outcomes);
  if (entries.length === 0) return '—';
  return entries
    .map(([field, { present, values }]) =>
      values ? `${field}: ${Object.entries(values).sort((a, b) => b[1] - a[1]).map(([value, n]) => `${value} ${n}`).join(', ')}` : `${field}: ${present} given`,
    )
    .join(' · ');
}
