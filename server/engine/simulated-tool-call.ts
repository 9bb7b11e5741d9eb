// simulate_tool: the flow's owner, in the studio, applies a tool call as if the model had made
// it. It is committed exactly like the model's (commitToolCall and finishToolCall in
// agent-turn.ts), and recorded in the history as the model's call, so a model that runs later
// knows the state; its cue and the entered state's line are spoken. The model does not run after it.
import type { FlowRuntime, StateEntry } from '../flow/runtime.ts';
import type { ChatToolCall } from '../providers/types.ts';
import { commitToolCall, finishToolCall, rememberEntries, type CommitTarget } from './agent-turn.ts';
import type { SpeechQueue } from './speech-queue.ts';

/**
 * Commits `call` at once (synchronously, before this returns its promise), then waits for an
 * http tool's answer and for the speech to be synthesized.
 */
export async function applySimulatedToolCall(target: CommitTarget, runtime: FlowRuntime, call: ChatToolCall, speech: SpeechQueue): Promise<void> {
  runtime.beginUserTurn();
  runtime.beginModelResponse();
  target.history.addAssistant(null, [call]);
  const outcome = commitToolCall(target, call, 'simulator', speech);
  // An http tool's request goes out as for the model.
  const answered = await finishToolCall(target, outcome, 'simulator', speech);
  const entries = [outcome.status === 'accepted' ? outcome.entered : undefined, answered?.entered];
  rememberEntries(target.history, entries.filter((entry): entry is StateEntry => entry !== undefined && entry !== null));
  await speech.finished();
}
