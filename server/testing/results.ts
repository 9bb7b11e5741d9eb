// What a flow-test run reports: per step, each expectation against what happened, with the
// transcript, the tool calls and the path; per test, its runs (several in model mode, with the
// pass rate); per suite, the coverage of the flow. The API returns these as JSON and the CLI's
// reporters print them.
import type { Exercised, FlowCoverage } from '../flow/tests-coverage.ts';
import type { Adherence } from '../protocol/adherence.ts';
import type { ToolCallSource } from '../protocol/events.ts';
import type { Judgement } from './judge.ts';

export type TestMode = 'scripted' | 'model' | 'audio';

export type CheckName = 'state' | 'tool_called' | 'variables' | 'says' | 'not_says' | 'card' | 'prompt' | 'interrupted' | 'ended' | 'transferred_to' | 'errors' | 'finished' | 'within_ms' | 'judge' | 'max_turns';

export interface CheckResult {
  check: CheckName;
  passed: boolean;
  expected: unknown;
  actual: unknown;
  /** One line for a designer: what differed. */
  message: string;
}

export interface TranscriptLine {
  role: 'user' | 'agent';
  text: string;
  interrupted?: boolean;
}

export interface ToolCallSeen {
  name: string;
  arguments: unknown;
  status: 'accepted' | 'rejected';
  reason: string | null;
  /** Why a refused call was refused (the tool_call event's code). */
  code?: string;
  /** The model's call, or one the test made itself (`simulate:`). */
  source: ToolCallSource;
  from_state: string;
  to_state: string;
  /** An http tool's answer, when it came during the step. */
  answer?: { ok: boolean; http_status: number | null; error: string | null };
}

export interface StepResult {
  index: number;
  /** What the step did: `user: …`, `simulate: tool`, `dtmf: 12#`, or `check`. */
  action: string;
  passed: boolean;
  checks: CheckResult[];
  transcript: TranscriptLine[];
  tool_calls: ToolCallSeen[];
  /** States entered during the step, in order. */
  path: string[];
  /** The state when the step was over. */
  state: string;
}

export interface TestRun {
  passed: boolean;
  steps: StepResult[];
  transcript: TranscriptLine[];
  /** Every state entered, the initial one first. */
  path: string[];
  exercised: Exercised;
  duration_ms: number;
  /** Why the run could not be completed (a provider missing, a crash), when it could not. */
  error: string | null;
  /** A simulated caller's run: how many turns it took and who ended the call. */
  caller?: { turns: number; ended_by: 'caller' | 'flow' | 'max_turns'; reason: string | null };
  /** The judge's verdict per criterion, when the test has a judge and the call was judged. */
  judgement?: Judgement | null;
  /** A spoken simulated caller's run (audio mode): each of its turns as said and as heard. */
  spoken_turns?: SpokenTurn[];
}

/** One turn of a spoken simulated caller. */
export interface SpokenTurn {
  /** The caller model's words, which the voice said. */
  said: string;
  /** What the session's speech to text heard of them (its user transcript for the turn). */
  transcribed: string;
  /** From the caller's last voiced frame to the agent's first audio, as the session measured it (its metrics event). */
  voice_to_voice_ms: number | null;
  /** What the caller heard of the agent's answer, through speech to text; null after its last turn. */
  agent_reply_heard: string | null;
}

export interface TestResult {
  name: string;
  passed: boolean;
  /** Runs that passed over runs made (a test's `runs`, or the run's repeat in model mode). */
  pass_rate: number;
  /** The share of runs the test needed to pass. */
  min_pass_rate?: number;
  runs: TestRun[];
  coverage: FlowCoverage;
  /**
   * How the model kept to the flow over all runs (docs/api.md#the-adherence-figure), in all and
   * by the state it was in; null in scripted mode, where the test script makes the calls.
   */
  adherence: (Adherence & { by_state: Record<string, Adherence> }) | null;
}

export interface SuiteResult {
  mode: TestMode;
  passed: boolean;
  tests: TestResult[];
  coverage: FlowCoverage;
  duration_ms: number;
}
