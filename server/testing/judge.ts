// The judge of a simulated call (docs/testing.md#simulated-callers): a model reads the call (its
// transcript, the flow's path, the tool calls) and decides each of the test's criteria on its own,
// with a reason, in an answer held to a JSON schema (structured outputs). The answer is still the
// model's text: it is parsed and checked here, and anything that does not fit — not JSON, a
// criterion left out, a failed request — makes that criterion unknown with the error, which fails
// the run; it never ends the run in an exception.
import { z } from 'zod';
import type { Judge } from '../flow/tests-caller.ts';
import type { LanguageModel } from '../providers/types.ts';
import type { ToolCallSeen, TranscriptLine } from './results.ts';

export interface CriterionVerdict {
  criterion: string;
  /** null: unknown (the judge's answer gave none that could be read; `error` says why). */
  passed: boolean | null;
  reason: string | null;
  error?: string;
}

export interface Judgement {
  /** The model that judged. */
  model: string;
  criteria: CriterionVerdict[];
}

/** What the judge reads of the call. */
export interface JudgedCall {
  transcript: readonly TranscriptLine[];
  path: readonly string[];
  toolCalls: readonly ToolCallSeen[];
  /** How the call ended, in words. */
  ending: string;
}

const SCHEMA_NAME = 'voxflow_judgement';

/** The schema the judge's answer is held to: one verdict per criterion, in their order. */
export const JUDGEMENT_SCHEMA = {
  type: 'object',
  properties: {
    verdicts: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          criterion: { type: 'string', description: 'The criterion, as given.' },
          passed: { type: 'boolean' },
          reason: { type: 'string', description: 'Why, citing what was said or done.' },
        },
        required: ['criterion', 'passed', 'reason'],
        additionalProperties: false,
      },
    },
  },
  required: ['verdicts'],
  additionalProperties: false,
} as const;

const Answer = z.object({ verdicts: z.array(z.object({ criterion: z.string(), passed: z.boolean(), reason: z.string() })) });

export const JUDGE_SYSTEM_PROMPT = [
  'You judge a phone call between a voice agent and a caller, for a test of the agent.',
  'Decide each criterion on its own, from what the transcript and the record of the call show; a criterion the call does not show to be met is not met.',
  'Answer one verdict per criterion, in the order given, each with the criterion as given, whether it passed, and a one-sentence reason.',
].join(' ');

export function describeCall(call: JudgedCall): string {
  const transcript = call.transcript.map((line) => `${line.role === 'agent' ? 'Agent' : 'Caller'}: ${line.text}${line.interrupted ? ' [cut off]' : ''}`).join('\n');
  const calls = call.toolCalls.map((c) => `${c.name}(${JSON.stringify(c.arguments ?? {})}) ${c.status}${c.status === 'accepted' ? ` ${c.from_state} → ${c.to_state}` : `: ${c.reason ?? ''}`}`).join('\n');
  return [`Transcript:\n${transcript || '(nothing was said)'}`, `States the call went through: ${call.path.join(' → ') || '(none)'}`, `Tool calls:\n${calls || '(none)'}`, `How it ended: ${call.ending}`].join('\n\n');
}

export async function judgeCall(llm: LanguageModel, judge: Judge, call: JudgedCall, signal: AbortSignal): Promise<Judgement> {
  const model = judge.model ?? llm.model;
  const unknown = (error: string): Judgement => ({ model, criteria: judge.criteria.map((criterion) => ({ criterion, passed: null, reason: null, error })) });
  if (!llm.completeJson) return unknown(`the ${llm.provider} model gives no structured answers, so it cannot judge`);
  const criteria = judge.criteria.map((c, i) => `${i + 1}. ${c}`).join('\n');
  let text: string;
  try {
    text = await llm.completeJson({
      messages: [
        { role: 'system', content: JUDGE_SYSTEM_PROMPT },
        { role: 'user', content: `Criteria:\n${criteria}\n\n${describeCall(call)}` },
      ],
      schema: { name: SCHEMA_NAME, schema: JUDGEMENT_SCHEMA },
      signal,
      ...(judge.model ? { model: judge.model } : {}),
    });
  } catch (error) {
    signal.throwIfAborted();
    return unknown(`the judge could not answer: ${error instanceof Error ? error.message : String(error)}`);
  }
  let parsed: z.infer<typeof Answer>;
  try {
    const result = Answer.safeParse(JSON.parse(text));
    if (!result.success) return unknown(`the judge's answer did not fit the schema (${result.error.issues[0]?.message ?? 'wrong shape'}): ${excerpt(text)}`);
    parsed = result.data;
  } catch {
    return unknown(`the judge's answer was not JSON: ${excerpt(text)}`);
  }
  return {
    model,
    criteria: judge.criteria.map((criterion, i) => {
      // By its text when the judge repeated it, else by its place.
      const verdict = parsed.verdicts.find((v) => v.criterion.trim() === criterion.trim()) ?? parsed.verdicts[i];
      if (!verdict) return { criterion, passed: null, reason: null, error: 'the judge gave no verdict on this criterion' };
      return { criterion, passed: verdict.passed, reason: verdict.reason };
    }),
  };
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `"${flat.slice(0, 200)}…"` : `"${flat}"`;
}
