// The inspector's Turn-taking section: a state's `turn` keys (docs/flows.md#turn-taking) written
// into the flow and read back, a key set back to the flow's or server's removed, and the result
// still a valid flow the server reads the same way.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { readTurn } from '../../../../../server/flow/graph/flow-data.ts';
import { setStateTurn } from '../../../../../renderer/src/features/editor/document/operations-turn.ts';
import { parseFlow } from '../../../../../server/flow/parse.ts';
import { FlowRuntime } from '../../../../../server/flow/runtime.ts';

const BOOKING = parse(readFileSync(new URL('../../../../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8'));

describe("a state's turn-taking in the inspector", () => {
  it('writes the keys set, reads them back, and the server takes them', () => {
    const edited: any = setStateTurn(BOOKING, 'welcome', { backchannels: 'interrupt', minInterruptionWords: 2, endpointingMs: 600, maxEndpointingMs: 2000 });
    expect(edited.states.welcome.turn).toEqual({ min_interruption_words: 2, backchannels: 'interrupt', endpointing_ms: 600, max_endpointing_ms: 2000 });
    expect(readTurn(edited.states.welcome)).toEqual({ minInterruptionWords: 2, backchannels: 'interrupt', endpointingMs: 600, maxEndpointingMs: 2000 });
    const parsed = parseFlow(stringify(edited));
    expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(new FlowRuntime(parsed.document!).turnOptions()).toMatchObject({ backchannels: 'interrupt', minInterruptionWords: 2, endpointingMs: 600, maxEndpointingMs: 2000 });
    // The input is the undo history's: it is left as it was.
    expect(BOOKING.states.welcome.turn).toBeUndefined();
  });

  it('removes a key set back to the default, and the turn map with its last key', () => {
    const set = setStateTurn(BOOKING, 'welcome', { backchannels: 'ignore', endpointingMs: 700 });
    const one: any = setStateTurn(set, 'welcome', { backchannels: null });
    expect(one.states.welcome.turn).toEqual({ endpointing_ms: 700 });
    const none: any = setStateTurn(one, 'welcome', { endpointingMs: null });
    expect(none.states.welcome).not.toHaveProperty('turn');
    expect(stringify(none)).toBe(stringify(BOOKING));
  });

  it('changes nothing for a state that does not exist', () => {
    expect(setStateTurn(BOOKING, 'nowhere', { endpointingMs: 700 })).toBe(BOOKING);
  });
});
