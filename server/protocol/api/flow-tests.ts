// What the flow-test endpoints answer: stored tests, and runs with their report (per test and
// step, expected against actual, the transcript, the path, and the flow's coverage).
import { z } from 'zod';
import { UnixSeconds } from './accounts.ts';
import { Severity } from './flows.ts';

export const TestDiagnostic = z.object({
  severity: Severity,
  code: z.string(),
  message: z.string(),
  path: z.array(z.union([z.string(), z.number()])),
  line: z.number(),
  column: z.number(),
});

export const FlowTestView = z.object({
  id: z.string(),
  flow_id: z.string(),
  name: z.string(),
  yaml_content: z.string(),
  created_at: UnixSeconds,
  updated_at: UnixSeconds,
  /** The test's warnings, in the answer to a write. */
  diagnostics: z.array(TestDiagnostic).optional(),
});
export const ImportedTests = z.object({ tests: z.array(FlowTestView), diagnostics: z.array(TestDiagnostic) });

const Transition = z.object({ from: z.string(), tool: z.string(), to: z.string() });
const fraction = <T extends z.ZodType>(item: T) => z.object({ covered: z.array(item), uncovered: z.array(item), fraction: z.number() });
export const FlowCoverage = z.object({ states: fraction(z.string()), transitions: fraction(Transition), tools: fraction(z.string()) });

const TranscriptLine = z.object({ role: z.enum(['user', 'agent']), text: z.string(), interrupted: z.boolean().optional() });
export const TestCheckView = z.object({ check: z.string(), passed: z.boolean(), expected: z.unknown(), actual: z.unknown(), message: z.string() });
export const TestStepView = z.object({
  index: z.number(),
  /** `user: …`, `simulate: tool`, or `check`. */
  action: z.string(),
  passed: z.boolean(),
  checks: z.array(TestCheckView),
  transcript: z.array(TranscriptLine),
  /** An http tool's call carries its answer and the state the answer chose. */
  tool_calls: z.array(
    z.object({
      name: z.string(),
      arguments: z.unknown(),
      status: z.enum(['accepted', 'rejected']),
      reason: z.string().nullable(),
      code: z.string().optional(),
      source: z.enum(['model', 'simulator']).optional(),
      from_state: z.string(),
      to_state: z.string(),
      answer: z.object({ ok: z.boolean(), http_status: z.number().nullable(), error: z.string().nullable() }).optional(),
    }),
  ),
  path: z.array(z.string()),
  /** The state when the step was over. */
  state: z.string(),
});
/** The adherence figure's counts (protocol/adherence.ts). */
export const AdherenceView = z.object({ tool_calls: z.number(), moves: z.number(), rejected_off_state: z.number(), rejected_arguments: z.number(), rejected_other: z.number() });
export const TestRunOnceView = z.object({
  passed: z.boolean(),
  steps: z.array(TestStepView),
  transcript: z.array(TranscriptLine),
  path: z.array(z.string()),
  exercised: z.object({ states: z.array(z.string()), transitions: z.array(Transition) }),
  duration_ms: z.number(),
  error: z.string().nullable(),
  /** A simulated caller's run: its turns, and who ended the call (the caller, the flow, or max_turns). */
  caller: z.object({ turns: z.number(), ended_by: z.enum(['caller', 'flow', 'max_turns']), reason: z.string().nullable() }).optional(),
  /** The judge's verdict per criterion; passed null is unknown (the judge's answer could not be read), with the error. */
  judgement: z
    .object({
      model: z.string(),
      criteria: z.array(z.object({ criterion: z.string(), passed: z.boolean().nullable(), reason: z.string().nullable(), error: z.string().optional() })),
    })
    .nullable()
    .optional(),
  /**
   * A spoken simulated caller's run (audio mode), per caller turn: its words as said, as the
   * session's speech to text heard them, the turn's voice-to-voice time, and what the caller heard
   * of the agent's answer through speech to text (null after its last turn).
   */
  spoken_turns: z
    .array(z.object({ said: z.string(), transcribed: z.string(), voice_to_voice_ms: z.number().nullable(), agent_reply_heard: z.string().nullable() }))
    .optional(),
});
export const TestResultView = z.object({
  /** The stored test this result is of (null for a test deleted since). */
  test_id: z.string().nullable(),
  name: z.string(),
  passed: z.boolean(),
  pass_rate: z.number(),
  /** The share of runs the test needed (its own min_pass_rate, else the run's). */
  min_pass_rate: z.number().optional(),
  runs: z.array(TestRunOnceView),
  coverage: FlowCoverage,
  /**
   * How the model kept to the flow over the runs, in all and by state (docs/api.md#the-adherence-figure);
   * null in scripted mode, absent from runs stored before it was counted.
   */
  adherence: AdherenceView.extend({ by_state: z.record(z.string(), AdherenceView) }).nullable().optional(),
});
export const TestMode = z.enum(['scripted', 'model', 'audio']);
export const FlowTestRunView = z.object({
  id: z.string(),
  flow_id: z.string(),
  mode: TestMode,
  draft: z.boolean(),
  flow_version: z.number().nullable(),
  test_ids: z.array(z.string()),
  status: z.enum(['running', 'passed', 'failed', 'error']),
  error: z.string().nullable(),
  created_at: UnixSeconds,
  finished_at: UnixSeconds.nullable(),
  /**
   * In the 202 that starts a run: what it is expected to cost, in the ledger's cents — each call
   * it simulates (a test, times its repeats in model mode) at its first minute of the parts its
   * mode uses (docs/testing.md). 0 for a scripted run, or when the account's own keys serve.
   */
  estimated_cost_usd_cents: z.number().int().min(0).optional(),
  /** The report, once the run is over (null when it ended in an error); the list of runs leaves it out. */
  result: z
    .object({ mode: TestMode, passed: z.boolean(), tests: z.array(TestResultView), coverage: FlowCoverage, duration_ms: z.number() })
    .nullable()
    .optional(),
});
