// The agent of scripted and audio runs: a language model that makes exactly the tool calls the
// current step expects, one per response (so a call that moves the flow is never rejected as
// "the state changed" behind another), then says the step's `reply`. The flow runtime checks its
// calls like any model's, so a test whose calls the flow does not allow fails as a model would.
import type { ToolCallExpectation } from '../flow/tests-format.ts';
import type { ChatMessage, LanguageModel, LlmChunk } from '../providers/types.ts';

export interface ScriptModel extends LanguageModel {
  /** What the agent does in answer to the next user turn. */
  plan(calls: readonly ToolCallExpectation[], reply: string | undefined): void;
}

export function createScriptModel(): ScriptModel {
  let calls: ToolCallExpectation[] = [];
  let reply: string | undefined;
  let made = 0;
  return {
    provider: 'script',
    model: 'voxflow-test-script',
    plan(next, words) {
      calls = [...next];
      reply = words;
    },
    async *stream({ signal }: { messages: ChatMessage[]; signal: AbortSignal }): AsyncIterable<LlmChunk> {
      signal.throwIfAborted();
      const call = calls.shift();
      if (call) {
        const args = JSON.stringify(call.arguments ?? {});
        yield { type: 'tool_call', call: { id: `script_${++made}`, type: 'function', function: { name: call.name, arguments: args } } };
        yield { type: 'done', finishReason: 'tool_calls' };
        return;
      }
      const words = reply;
      reply = undefined;
      if (words?.trim()) yield { type: 'text', text: words };
      yield { type: 'done', finishReason: 'stop' };
    },
  };
}
