// One run of a test with a simulated caller: the configured model plays the flow's agent in a real
// engine session, and a second conversation with a model (simulated-caller.ts) plays the caller,
// turn by turn, until the caller hangs up, the flow ends the call, or the caller has had its
// `max_turns` and would speak again (a failed run saying so). Then the test's plain `expect` is
// checked over the whole call (checks.ts, as a step's is), and the judge, if any, decides its
// criteria (judge.ts). The result is one step, "simulated call", holding every check.
//
// Typed (model mode) the caller's words go through the engine's text path and it reads the
// agent's words from the transcript, on a stepped clock. Spoken (audio mode) each of its turns is
// synthesized by the configured voice and streamed in on the run's paced clock, heard by the
// session through VAD, turn-taking and the configured speech to text as a call is; and the caller
// hears the agent's audio through that speech to text too (caller-ear.ts).
import { DEFAULT_CALLER_TURNS, type SimulatedCaller } from '../flow/tests-caller.ts';
import type { FlowTest, TestStep } from '../flow/tests-format.ts';
import type { FlowDocument } from '../flow/types.ts';
import type { ServerEvent } from '../protocol/events.ts';
import { synthesizeLines } from './caller-audio.ts';
import { CallerEar } from './caller-ear.ts';
import { checkStep, pathOf, toolCallsOf, transcriptOf } from './checks.ts';
import { pacedClock, steppedClock } from './clocks.ts';
import { judgeCall, type Judgement } from './judge.ts';
import type { CheckResult, SpokenTurn, TestRun } from './results.ts';
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
  const spoken = options.mode === 'audio';
  const { stt, tts, vad } = options.providers;
  let session: TestSession | null = null;
  let ear: CallerEar | null = null;
  const spokenTurns: SpokenTurn[] = [];
  try {
    if (spoken) ear = new CallerEar(stt!, 'en');
    const hearing = ear;
    session = new TestSession({
      flow,
      flowId: options.flowId ?? null,
      context: test.context ?? {},
      llm,
      tts: spoken ? tts! : createSilentVoice(),
      stt: spoken ? stt! : null,
      vad: spoken ? vad! : null,
      clock: spoken ? pacedClock(options.speed ?? 1) : steppedClock(),
      sendToolRequest: scriptedToolSender(() => test.tool_results),
      ...(hearing ? { onAgentAudio: (frame: Int16Array) => hearing.hear(frame) } : {}),
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
      const heard = ear ? await ear.heardSinceLastTurn(signal) : transcriptOf(events.slice(heardFrom)).filter((l) => l.role === 'agent').map((l) => l.text).join(' ');
      if (spokenTurns.length > 0) spokenTurns.at(-1)!.agent_reply_heard = heard;
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
      if (spoken) {
        const speech = (await synthesizeLines(tts!, [move.say], signal)).get(move.say)!;
        // Words the voice cannot say (nothing but emoji, say) would leave the session waiting for a turn that never comes.
        if (speech.length === 0) throw new Error(`the voice made no sound of the simulated caller's turn "${move.say}"`);
        session.speak(speech);
      } else {
        session.type(move.say);
      }
      settled = await session.settle({ fromEvent: heardFrom, spoke: spoken, timeoutMs, signal });
      if (spoken) spokenTurns.push(spokenTurn(move.say, session.events.slice(heardFrom).map((e) => e.event)));
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
    return {
      ...finishRun(session, [step], started, null),
      caller: ending ?? { turns, ended_by: 'max_turns', reason: null },
      judgement,
      ...(spoken ? { spoken_turns: spokenTurns } : {}),
    };
  } catch (error) {
    if (signal.aborted) throw error;
    return finishRun(session, [], started, error instanceof Error ? error.message : String(error));
  } finally {
    await session?.end();
    ear?.close();
  }
}

/** A spoken caller's turn: its words, what the session's speech to text made of them, and the turn's voice-to-voice time. */
function spokenTurn(said: string, events: readonly ServerEvent[]): SpokenTurn {
  const heardBySession = transcriptOf(events).filter((l) => l.role === 'user').map((l) => l.text).join(' ');
  let voiceToVoice: number | null = null;
  for (const event of events) if (event.type === 'metrics' && event.voice_to_voice_ms !== null) voiceToVoice ??= event.voice_to_voice_ms;
  return { said, transcribed: heardBySession, voice_to_voice_ms: voiceToVoice, agent_reply_heard: null };
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
