// Barge-in: the caller talking over the agent (or a typed turn, the client's `interrupt`, the
// end of the session) stops it at once. Control does not queue behind data: the turn in flight
// is aborted, the queued audio is dropped, and the model's memory is rewritten to what the caller
// actually heard (ConversationHistory.rewriteAsHeard). What was committed stays: a tool call and
// its history entry went in together (commitToolCall in agent-turn.ts), so an interruption lands
// before or after a call, never half-way.
import type { ServerEvent } from '../protocol/events.ts';
import type { AgentTurn } from './agent-turn.ts';
import type { AudioOut } from './audio-out.ts';
import type { ConversationHistory } from './conversation-history.ts';
import type { TurnTiming } from './turn-timing.ts';

export interface BargeInTarget {
  readonly audioOut: AudioOut;
  readonly history: ConversationHistory;
  send(event: ServerEvent): void;
  /** Reports a turn's `metrics`, unless it already did. */
  sendMetrics(timing: TurnTiming): void;
}

/**
 * Stops the agent now: cancels `turn` (the one that was in flight, already no longer the
 * session's current one) and the speech in flight, and records what was heard.
 */
export function interruptAgent(target: BargeInTarget, turn: AgentTurn | null): void {
  const { audioOut, history } = target;
  const wasSpeaking = audioOut.isSpeaking;
  const busy = turn !== null || audioOut.isBusy;
  const sentences = audioOut.stop();
  turn?.abort();
  if (!busy) return;
  target.send({ type: 'interrupted' });
  if (wasSpeaking) target.send({ type: 'agent_stopped_speaking' });
  const heard = history.rewriteAsHeard(sentences);
  if (heard) target.send({ type: 'transcript', role: 'agent', text: heard, final: true, interrupted: true });
  // A turn cut before its first audio frame (a slow voice, and the caller talks or hangs up
  // first) has not reported yet, and its own ending no longer will: it reports now, with what
  // it measured, so no turn goes missing from the latency table.
  if (turn) target.sendMetrics(turn.timing);
}
