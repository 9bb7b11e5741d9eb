// One run of a test with a simulated caller: the configured model plays the flow's agent in a real
// engine session, typed, and a second conversation with a model (simulated-caller.ts) plays the
// caller, turn by turn, until the caller hangs up, the flow ends the call, or the caller has had
// its `max_turns` and would speak again (a failed run saying so). Then the test's plain `expect`
// is checked over the whole call (checks.ts, as a step's is), and the judge, if any, decides its
// criteria (judge.ts). The result is one step, "simulated call", holding every check.
import { DEFAULT_CALLER_TURNS, type SimulatedCaller } from '../flow/tests-caller.ts';
import type { FlowTest, TestStep } from '../flow/tests-format.ts';
import type { FlowDocument } from '../flow/types.ts';
import { checkStep, pathOf, toolCallsOf, transcriptOf } from './checks.ts';
import { steppedClock } from './clocks.ts';
import { judgeCall, type Judgement } from './judge.ts';
import type { CheckResult, TestRun } from './results.ts';
import { finishRun, type RunOptions } from './run-tests.ts';
import { SimulatedCallerModel } from './simulated-caller.ts';
import { createSilentVoice } from './silent-voice.ts';
import { TestSession } from './test-session.ts';
import { scriptedToolSender } from './tool-answers.ts';

export const SIMULATED_CALL_ACTION = 'simulated call';

export async function runCallerCall(flow: FlowDocument, test: FlowTest, caller: SimulatedCaller, options: RunOptions & { stepTimeoutMs: number }): Promise<TestRun> {
  const started = performance.now();
  const llm = options.providers.llm!;
  const signal = options.signal ?? new AbortController().signal;
  const maxTurns = caller.max_turns ?? DEFAULT_CALLER_TURNS;
  const timeoutMs = options.stepTimeoutMs;
  let session: TestSession | null = null;
  try {
    session = new TestSession({
      flow,
      flowId: options.flowId ?? null,
      context: test.context ?? {},
      llm,
      tts: createSilentVoice(),
      stt: null,
      vad: null,
      clock: steppedClock(),
      sendToolRequest: scriptedToolSender(() => test.tool_results),
    });
    await session.start();
    const model = new SimulatedCallerModel(llm, caller, test.caller_llm);
    let heardFrom = 0;
    let turns = 0;
    let ending: NonNullable<TestRun['caller']> | null = null;
    let settled = await session.settle({ fromEvent: 0, spoke: false, timeoutMs, signal });
    const extra: CheckResult[] = [];
    for (;;) {
      signal.throwIfAborted();
      if (settled === 'ended') {
        ending = { turns, ended_by: 'flow', reason: session.session.isEnded ? endReason(session) : null };
        break;
      }
      if (settled === 'timeout') {
        extra.push({ check: 'finished', passed: false, expected: 'the agent done', actual: 'timeout', message: `the agent was still busy after ${timeoutMs / 1000} s` });
        break;
      }
      const events = session.events.map((e) => e.event);
      const heard = transcriptOf(events.slice(heardFrom)).filter((l) => l.role === 'agent').map((l) => l.text).join(' ');
      heardFrom = events.length;
      const move = await model.next(heard, signal);
      if ('hangUp' in move) {
        ending = { turns, ended_by: 'caller', reason: move.hangUp };
        break;
      }
      if (turns >= maxTurns) {
        ending = { turns, ended_by: 'max_turns', reason: null };
        extra.push({
          check: 'max_turns',
          passed: false,
          expected: maxTurns,
          actual: turns + 1,
          message: `the caller had not hung up after ${maxTurns} turns (max_turns) and went on: "${move.say}"`,
        });
        break;
      }
      turns++;
      session.type(move.say);
      settled = await session.settle({ fromEvent: heardFrom, spoke: false, timeoutMs, signal });
    }
    const all = session.events.map((e) => e.event);
    const step = checkStep(0, { user: '', expect: test.expect } as TestStep, all, all, { prompt: session.session.runtime?.systemPrompt() ?? '', unfinished: null });
    step.action = SIMULATED_CALL_ACTION;
    step.checks.unshift(...extra);
    let judgement: Judgement | null = null;
    if (test.judge) {
      judgement = await judgeCall(llm, test.judge, { transcript: transcriptOf(all), path: pathOf(all), toolCalls: toolCallsOf(all), ending: describeEnding(ending, maxTurns) }, signal);
      for (const verdict of judgement.criteria) step.checks.push(judgeCheck(verdict));
    }
    step.passed = step.checks.every((c) => c.passed);
    return { ...finishRun(session, [step], started, null), caller: ending ?? { turns, ended_by: 'max_turns', reason: null }, judgement };
  } catch (error) {
    if (signal.aborted) throw error;
    return finishRun(session, [], started, error instanceof Error ? error.message : String(error));
  } finally {
    await session?.end();
  }
}

function endReason(session: TestSession): string | null {
  const ended = session.events.map((e) => e.event).find((e) => e.type === 'session_ended');
  return ended && ended.type === 'session_ended' ? ended.reason : null;
}

function describeEnding(ending: TestRun['caller'] | null, maxTurns: number): string {
  if (!ending) return 'the agent stopped answering';
  if (ending.ended_by === 'caller') return `the caller hung up after ${ending.turns} turns (${ending.reason})`;
  if (ending.ended_by === 'flow') return `the agent's flow ended the call after ${ending.turns} caller turns`;
  return `the caller was still talking after ${maxTurns} turns and was cut off`;
}

function judgeCheck(verdict: Judgement['criteria'][number]): CheckResult {
  const passed = verdict.passed === true;
  const message =
    verdict.passed === null
      ? `unknown: ${verdict.criterion} (${verdict.error ?? 'no verdict'})`
      : `${passed ? 'met' : 'not met'}: ${verdict.criterion} — ${verdict.reason ?? ''}`;
  return { check: 'judge', passed, expected: verdict.criterion, actual: verdict.passed === null ? { passed: null, error: verdict.error } : { passed: verdict.passed, reason: verdict.reason }, message };
}
