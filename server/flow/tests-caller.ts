// A simulated caller and its judge, the part of the flow-test format (tests-format.ts) for tests
// that have a model play the caller instead of scripted steps (docs/testing.md#simulated-callers):
//
//   caller: {persona: "…", goal: "…", max_turns: 12}   # the configured model plays the caller
//   caller_llm: gpt-4o                                  # optional: another model for the caller
//   judge: {criteria: ["…"], model: gpt-4o}             # a model decides, criterion by criterion
//   tool_results: {check_availability: {body: …}}       # the http tools' answers, for the whole call
//   expect: {state: booked, tool_called: [...]}         # plain checks, over the whole call
//   runs: 5                                             # the test is run this many times …
//   min_pass_rate: 0.8                                  # … and passes when this share of them pass
//
// Pure TypeScript: the studio bundles this folder.
import { z } from 'zod';

/** The most caller turns one simulated call may have. */
export const MAX_CALLER_TURNS = 50;
/** The default when a test does not say. */
export const DEFAULT_CALLER_TURNS = 12;
/** The most runs one test may ask for. */
export const MAX_TEST_RUNS = 20;
/** The longest budget a step may give the agent (a minute is no voice reply). */
export const MAX_WITHIN_MS = 60_000;

const ModelName = z.string().min(1).max(200);

export const SimulatedCaller = z.strictObject({
  /** Who the caller is: how they speak, what they know, how patient they are. */
  persona: z.string().min(1).max(4_000),
  /** What the caller wants from the call. */
  goal: z.string().min(1).max(4_000),
  /** The caller's turns at most; a caller that has not hung up by then fails the run. */
  max_turns: z.number().int().min(1).max(MAX_CALLER_TURNS).optional(),
});
export type SimulatedCaller = z.infer<typeof SimulatedCaller>;

export const Judge = z.strictObject({
  /** What must be true of the call, each decided on its own with a reason. */
  criteria: z.array(z.string().min(1).max(1_000)).min(1).max(20),
  /** The model that judges (the configured provider's), when not the configured one. */
  model: ModelName.optional(),
});
export type Judge = z.infer<typeof Judge>;

/** The keys a test with a simulated caller may have beside the common ones (name, context). */
export const CALLER_TEST_KEYS = ['caller', 'caller_llm', 'judge', 'tool_results', 'expect'] as const;
export { ModelName };
