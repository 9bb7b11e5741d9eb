// The conversation's lines in the test-talk view: interim words revised in place, and a barge-in
// marking what the user heard of the agent's turn (talk-reducer.ts folds events through here).
import type { ServerEvent } from '../../../../server/protocol/events.ts';
import type { TalkView, TranscriptLine } from './talk-view.ts';

const MAX_LINES = 500;

/** A `transcript` event: a new line, interim words revised, or a barge-in marked on the agent's turn. */
export function onTranscript(view: TalkView, event: Extract<ServerEvent, { type: 'transcript' }>): TalkView {
  const lines = view.transcript.slice();
  if (event.interrupted && event.role === 'agent') {
    const marked = markInterrupted(lines, event.text);
    if (!marked) lines.push({ id: view.nextId, role: 'agent', text: event.text, final: true, interrupted: true, heard: event.text });
    return { ...view, transcript: lines.slice(-MAX_LINES), nextId: view.nextId + 1 };
  }
  // Interim words are revised in place until the final ones arrive.
  const interim = lastIndex(lines, (line) => line.role === event.role && !line.final);
  if (interim >= 0) {
    lines[interim] = { ...lines[interim]!, text: event.text, final: event.final };
    return { ...view, transcript: lines };
  }
  lines.push({ id: view.nextId, role: event.role, text: event.text, final: event.final, interrupted: false, heard: null });
  return { ...view, transcript: lines.slice(-MAX_LINES), nextId: view.nextId + 1 };
}

/**
 * A barge-in names what the user heard of the whole turn, which may span several agent lines (a
 * speech cue, then the model's answer). The heard words are matched against the turn's lines in
 * order: lines heard whole stay as they are, the first one not heard whole is marked cut with the
 * part that was heard, and any after it were never heard. False when the turn showed no agent
 * line yet (the agent was cut before the model finished).
 */
function markInterrupted(lines: TranscriptLine[], heardText: string): boolean {
  const turn: number[] = [];
  for (let i = lines.length - 1; i >= 0 && lines[i]!.role === 'agent'; i--) if (!lines[i]!.interrupted) turn.unshift(i);
  if (turn.length === 0) return false;
  let rest = heardText.trim();
  let cut = -1;
  for (const index of turn) {
    const line = lines[index]!;
    if (cut >= 0) {
      lines[index] = { ...line, interrupted: true, heard: '' };
      continue;
    }
    const text = line.text.trim();
    if (rest.startsWith(text) && index !== turn.at(-1)) {
      rest = rest.slice(text.length).trim();
      continue;
    }
    cut = index;
    lines[index] = { ...line, interrupted: true, heard: rest };
  }
  return true;
}

function lastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!)) return i;
  return -1;
}
