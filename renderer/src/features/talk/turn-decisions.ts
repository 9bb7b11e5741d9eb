// What the engine decided about the turn-taking (docs/flows.md#turn-taking), in words for the
// test-talk log and the session view: caller speech over the agent (cut, ignored as a
// backchannel, or noise it resumed after), and each end of the caller's turn with the wait used.
import type { ServerEventOf } from '../../../../server/protocol/events.ts';

export type TurnDecisionEvent = ServerEventOf<'barge_in'> | ServerEventOf<'turn_end'>;

export interface TurnDecisionText {
  kind: 'interrupted' | 'ignored_backchannel' | 'resumed' | 'turn_end';
  /** A word or two: what happened. */
  summary: string;
  /** Why: the words or the duration that decided it. */
  detail: string;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const quoted = (text: string) => `“${text}”`;

const END_REASONS: Record<ServerEventOf<'turn_end'>['reason'], string> = {
  unfinished: 'the words stopped mid-sentence',
  short_answer: "a whole short answer to the state's question",
  default: 'the usual wait',
  fixed: "the state's fixed wait",
  model_complete: 'the end-of-turn model heard a finished turn',
  model_unfinished: 'the end-of-turn model heard the caller not done',
};

/** Null for a decision this studio has no words for (a newer server's). */
export function describeTurnDecision(event: TurnDecisionEvent): TurnDecisionText | null {
  if (event.type === 'turn_end') {
    const words = event.transcript ? ` after ${quoted(event.transcript)}` : '';
    const why = END_REASONS[event.reason];
    return why ? { kind: 'turn_end', summary: 'Turn ended', detail: `${event.wait_ms} ms of silence${words}: ${why}` } : null;
  }
  const said = event.transcript ? quoted(event.transcript) : null;
  switch (event.decision) {
    case 'interrupted':
      return {
        kind: 'interrupted',
        summary: 'Agent cut',
        detail: event.reason === 'words' && said ? `by ${said}` : `by ${seconds(event.duration_ms)} of speech${said ? ` (${said})` : ''}`,
      };
    case 'ignored_backchannel': {
      const why = event.reason === 'backchannel' ? 'is a backchannel' : event.reason === 'too_few_words' ? "has fewer words than the state's minimum" : 'was too short to be a turn';
      return { kind: 'ignored_backchannel', summary: 'Agent went on', detail: `${said ?? 'the speech'} ${why}` };
    }
    case 'resumed':
      return { kind: 'resumed', summary: 'Agent resumed', detail: `no words in ${seconds(event.duration_ms)} of sound` };
    default:
      return null;
  }
}
