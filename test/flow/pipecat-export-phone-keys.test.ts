// A phone flow out to Pipecat Flows: a FlowConfig has no keypad, transfer, voicemail or key
// sending, so each is left out with a diagnostic naming it; the rest of the flow exports as before.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { exportPipecatFlow } from '../../server/flow/pipecat/index.ts';
import { PHONE_VALID } from './phone-diagnostic-cases.ts';

describe('exporting a phone flow to Pipecat Flows', () => {
  it('names each phone key it leaves out, at its path', () => {
    const { flowConfig, diagnostics } = exportPipecatFlow(parseFlow(PHONE_VALID).document!);
    const dropped = diagnostics.filter((d) => d.code === 'pipecat_no_equivalent').map((d) => d.path.join('.'));
    expect(dropped).toEqual(expect.arrayContaining(['settings.voicemail', 'states.menu.dtmf', 'states.human.on_enter.transfer', 'tools.press_for_operator.send_dtmf']));
    for (const key of ['voicemail', 'dtmf', 'transfer', 'send_dtmf']) {
      expect(diagnostics.find((d) => d.path.at(-1) === key)?.message, key).toContain(key);
    }
    // What does map still does: the line said before the transfer, the tool and its move.
    expect(flowConfig.nodes.human?.pre_actions).toEqual([{ type: 'tts_say', text: 'Connecting you to the front desk.' }]);
    expect(flowConfig.nodes.verify?.functions?.[0]).toMatchObject({ function: { name: 'press_for_operator', transition_to: 'book' } });
    expect(JSON.stringify(flowConfig)).not.toMatch(/dtmf|transfer|voicemail|\+1555/);
  });
});
