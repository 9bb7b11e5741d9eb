// What the analytics endpoints answer (docs/api.md#analytics): a flow's traffic, and the sessions
// that took one of its moves.
import { z } from 'zod';
import { UnixSeconds } from './accounts.ts';

export const FlowTrafficView = z.object({
  flow_id: z.string(),
  /** The filters as applied: the time range in Unix seconds (null: open), and the others as given. */
  filter: z.object({
    from: UnixSeconds.nullable(),
    to: UnixSeconds.nullable(),
    version: z.union([z.number(), z.literal('draft')]).nullable(),
    success: z.enum(['true', 'false', 'unknown']).nullable(),
    outcome: z.object({ field: z.string(), value: z.string() }).nullable(),
    experiment: z.string().nullable(),
    arm: z.number().nullable(),
  }),
  /** Sessions of the flow that connected, in the range and passing the filters. */
  calls: z.number(),
  /** Per state, the calls that reached it at least once. */
  states: z.array(z.object({ state: z.string(), calls: z.number() })),
  /** Per move: the calls that took it at least once, and how many times it was taken. `from` null: the call's first state. */
  transitions: z.array(z.object({ from: z.string().nullable(), to: z.string(), tool: z.string().nullable(), calls: z.number(), times: z.number() })),
  /** Ended calls by the state they were in and their end reason (state null: ended before the flow's first state). */
  ends: z.array(z.object({ state: z.string().nullable(), reason: z.string(), calls: z.number() })),
  /** Analysed success: none counts calls with no analysed success (not yet analysed, or no criteria). */
  success: z.object({ true: z.number(), false: z.number(), unknown: z.number(), none: z.number() }),
});

export const TransitionSessionsPage = z.object({
  sessions: z.array(
    z.object({
      id: z.string(),
      created_at: UnixSeconds,
      started_at: UnixSeconds.nullable(),
      duration_secs: z.number().nullable(),
      success: z.union([z.boolean(), z.literal('unknown')]).nullable(),
    }),
  ),
  /** Pass as `cursor` for the next page; null on the last one. */
  next_cursor: z.string().nullable(),
});
