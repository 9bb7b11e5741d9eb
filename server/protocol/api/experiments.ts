// What the experiment endpoints answer (docs/api.md#experiments): an experiment, its arms, and
// with one experiment's GET the per-arm results.
import { z } from 'zod';
import { UnixSeconds } from './accounts.ts';

export const ExperimentArmView = z.object({ version: z.number(), weight: z.number() });

export const ExperimentView = z.object({
  id: z.string(),
  flow_id: z.string(),
  name: z.string(),
  arms: z.array(ExperimentArmView),
  /** running, stopped (no more sessions get an arm), or concluded (stopped, and `winner` was published). */
  status: z.enum(['running', 'stopped', 'concluded']),
  created_at: UnixSeconds,
  stopped_at: UnixSeconds.nullable(),
  winner: z.number().nullable(),
});

/** A share of calls with its 95 % Wilson score interval; null with no calls to count. */
const Rate = z.object({ rate: z.number(), low: z.number(), high: z.number() });

export const ExperimentArmResults = z.object({
  version: z.number(),
  weight: z.number(),
  /** Sessions given this arm. */
  sessions: z.number(),
  /** Of them, those that ran and ended: what the rest is counted over. */
  calls: z.number(),
  /** The calls' analysed success; `unknown` is left out of the rate and counted apart. */
  success: z.object({
    true: z.number(),
    false: z.number(),
    unknown: z.number(),
    /** true / (true + false), with its 95 % interval; null while none is true or false. */
    rate: Rate.nullable(),
  }),
  average_duration_secs: z.number().nullable(),
  average_cost_usd_cents: z.number().nullable(),
  /** Per outcome field: how many calls gave it a value, and for booleans and enums how many gave each. */
  outcomes: z.record(z.string(), z.object({ present: z.number(), values: z.record(z.string(), z.number()).optional() })),
  /** Per state: the calls whose path entered it, and their share of the arm's calls. */
  states: z.record(z.string(), z.object({ calls: z.number(), share: z.number() })),
});

export const ExperimentDetail = ExperimentView.extend({ results: z.array(ExperimentArmResults) });
