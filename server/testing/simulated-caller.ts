// The simulated caller of a flow test (docs/testing.md#simulated-callers): a language model given
// a persona and a goal, talking to the flow's agent one turn at a time. The agent's words reach it
// as the other party's (the `user` role), its own turns are its `assistant` messages, and it ends
// the call by calling its one tool, `end_call` — a tool call, not a phrase, so "goodbye" said in
// passing never hangs up by accident and a caller's last words are never mistaken for a turn.
import type { SimulatedCaller } from '../flow/tests-caller.ts';
import type { OpenAITool } from '../flow/runtime.ts';
import type { ChatMessage, LanguageModel } from '../providers/types.ts';

/** The tool the caller's model calls to hang up. */
export const END_CALL_TOOL = 'end_call';

const END_CALL: OpenAITool = {
  type: 'function',
  function: {
    name: END_CALL_TOOL,
    description: 'Hang up. Call it when your goal is met, or when you give up on it; say nothing else in that answer.',
    parameters: {
      type: 'object',
      properties: { reason: { type: 'string', description: 'Why you are hanging up, in a few words (e.g. "booked for Tuesday", "gave up: no slot").' } },
      required: ['reason'],
      additionalProperties: false,
    },
  },
};

/** What the caller does next: says something, or hangs up. */
export type CallerMove = { say: string } | { hangUp: string };

/** The caller's own system prompt, from its persona and goal. */
export function callerSystemPrompt(caller: SimulatedCaller): string {
  return [
    'You are playing a caller on a phone call, to test a voice agent. Stay in character all along; never say that you are an AI, a model or a test.',
    `Who you are: ${caller.persona}`,
    `What you want from this call: ${caller.goal}`,
    'Speak as this caller would on the phone: one short turn at a time, plain words only, no stage directions, no lists.',
    `When your goal is met, or you give up on it, call the ${END_CALL_TOOL} tool instead of speaking.`,
  ].join('\n\n');
}

export class SimulatedCallerModel {
  private readonly messages: ChatMessage[];

  constructor(
    private readonly llm: LanguageModel,
    caller: SimulatedCaller,
    /** Another model of the same provider for the caller (the test's `caller_llm`). */
    private readonly model: string | undefined,
  ) {
    this.messages = [{ role: 'system', content: callerSystemPrompt(caller) }];
  }

  /**
   * The caller's next move after hearing `agentSaid` (the agent's words since the caller's last
   * turn; empty when the agent said nothing). Throws when the model answers neither words nor a
   * hang-up, or fails.
   */
  async next(agentSaid: string, signal: AbortSignal): Promise<CallerMove> {
    this.messages.push({ role: 'user', content: agentSaid.trim() || '(the agent says nothing)' });
    let text = '';
    let hangUp: string | null = null;
    for await (const chunk of this.llm.stream({ messages: this.messages, tools: [END_CALL], signal, ...(this.model ? { model: this.model } : {}) })) {
      if (chunk.type === 'text') text += chunk.text;
      else if (chunk.type === 'tool_call' && chunk.call.function.name === END_CALL_TOOL) hangUp = reasonOf(chunk.call.function.arguments);
    }
    if (hangUp !== null) return { hangUp };
    const said = text.trim();
    if (!said) throw new Error("the simulated caller's model answered neither words nor end_call");
    this.messages.push({ role: 'assistant', content: said });
    return { say: said };
  }
}

function reasonOf(args: string): string {
  try {
    const parsed = JSON.parse(args) as { reason?: unknown };
    return typeof parsed.reason === 'string' && parsed.reason.trim() ? parsed.reason.trim() : 'no reason given';
  } catch {
    return 'no reason given';
  }
}
