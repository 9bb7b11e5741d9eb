// A state's `group` (docs/flows.md#groups): accepted with a short name, refused with a clear error
// at its place otherwise, and ignored by everything that runs or exports the flow.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { exportPipecatFlow } from '../../server/flow/pipecat/index.ts';
import { FlowRuntime } from '../../server/flow/runtime.ts';

const GROUPED = `id: shop
version: "1.0.0"
initial_state: welcome
states:
  welcome:
    group: front-desk
    agent: { prompt: Greet the caller., tools: [to_billing] }
    tools: { to_billing: { description: The caller asks about a bill. } }
    transitions: { on_tool_call: { to_billing: ask_invoice } }
  ask_invoice:
    # billing starts here
    group: billing
    agent: { prompt: Ask for the invoice number., tools: [got_invoice] }
    tools:
      got_invoice: { description: The caller gave it., parameters: { invoice: { type: string, required: true } } }
    transitions: { on_tool_call: { got_invoice: done } }
  done:
    group: billing
    on_enter: { say: "Thanks, goodbye.", end_session: true }
    agent: { prompt: Say goodbye. }
`;

const UNGROUPED = GROUPED.replace(/^ {4}group: .*\n/gm, '');

describe('a state group', () => {
  it('is accepted with no diagnostic and kept on the state', () => {
    const result = parseFlow(GROUPED);
    expect(result.diagnostics).toEqual([]);
    expect(result.document?.states.ask_invoice?.group).toBe('billing');
    expect(result.document?.states.welcome?.group).toBe('front-desk');
  });

  it.each([
    ['a space', 'Billing desk'],
    ['a leading digit', '2nd-line'],
    ['a colon', 'billing:eu'],
    ['nothing at all', ''],
    ['more than 40 characters', 'b'.repeat(41)],
  ])('with %s in its name is an error at the value, saying the rule', (_what, name) => {
    const result = parseFlow(GROUPED.replace('group: front-desk', `group: ${JSON.stringify(name)}`));
    expect(result.document).toBeNull();
    expect(result.diagnostics).toHaveLength(1);
    expect(result.diagnostics[0]).toMatchObject({ code: 'invalid_group_name', severity: 'error', line: 6, column: 12, path: ['states', 'welcome', 'group'] });
    expect(result.diagnostics[0]!.message).toContain('1 to 40 letters, digits, _ or -');
  });

  it('that is not text is a wrong type, with how to write it', () => {
    const result = parseFlow(GROUPED.replace('group: front-desk', 'group: 7'));
    expect(result.diagnostics).toMatchObject([{ code: 'wrong_type', line: 6, column: 12, path: ['states', 'welcome', 'group'] }]);
    expect(result.diagnostics[0]!.message).toContain('"7" in quotes');
  });

  it('changes nothing the runtime does', () => {
    const grouped = new FlowRuntime(parseFlow(GROUPED).document!);
    const plain = new FlowRuntime(parseFlow(UNGROUPED).document!);
    for (const runtime of [grouped, plain]) {
      runtime.beginUserTurn();
      runtime.beginModelResponse();
    }
    expect(grouped.applyToolCall('to_billing', {})).toEqual(plain.applyToolCall('to_billing', {}));
    expect(grouped.systemPrompt()).toBe(plain.systemPrompt());
    expect(grouped.snapshot()).toEqual(plain.snapshot());
  });

  it('is left out of a Pipecat export without a word', () => {
    const grouped = exportPipecatFlow(parseFlow(GROUPED).document!);
    const plain = exportPipecatFlow(parseFlow(UNGROUPED).document!);
    expect(grouped.flowConfig).toEqual(plain.flowConfig);
    expect(grouped.diagnostics).toEqual(plain.diagnostics);
    expect(JSON.stringify(grouped)).not.toContain('front-desk');
  });
});
