import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { DIAGNOSTIC_CODES, type DiagnosticCode, type Severity } from '../../server/flow/diagnostic-codes.ts';
import { EXTENDED_CASES } from './extended-diagnostic-cases.ts';
import { PHONE_CASES } from './phone-diagnostic-cases.ts';

/** A valid two-state flow; each case below breaks one thing in it. Line numbers matter. */
const VALID = `id: demo
version: "1.0.0"
initial_state: ask
settings:
  base_system_prompt: Be brief.
states:
  ask:
    ui:
      artifact_type: card
      prompt: "Hello {name}"
    agent:
      prompt: Ask for the caller's name, then call save_name.
      tools: [save_name]
    tools:
      save_name:
        description: Save the caller's name.
        parameters:
          name:
            type: string
            required: true
        speech_cue: "Thanks, {name}."
    transitions:
      on_tool_call:
        save_name: done
  done:
    agent:
      prompt: Say goodbye to {name}.
      tools: [restart]
    tools:
      restart:
        description: Start over.
    transitions:
      on_tool_call:
        restart: ask
`;

function edit(from: string, to: string): string {
  if (!VALID.includes(from)) throw new Error(`fixture does not contain ${from}`);
  return VALID.replace(from, to);
}

interface Case {
  code: DiagnosticCode;
  severity: Severity;
  yaml: string;
  line: number;
  column: number;
  path: Array<string | number>;
  /** A word the message must contain, so the designer is told what to fix. */
  mentions: string;
}

const cases: Case[] = [
  {
    code: 'yaml_syntax',
    severity: 'error',
    yaml: edit('      tools: [save_name]', '      tools: [save_name'),
    line: 14,
    column: 5,
    path: [],
    mentions: ']',
  },
  {
    code: 'yaml_syntax',
    severity: 'error',
    yaml: edit('initial_state: ask', 'initial_state: ask\ninitial_state: done'),
    line: 4,
    column: 1,
    path: [],
    mentions: 'unique',
  },
  {
    code: 'missing_key',
    severity: 'error',
    yaml: edit('      prompt: Say goodbye to {name}.\n', ''),
    line: 26,
    column: 5,
    path: ['states', 'done', 'agent'],
    mentions: 'prompt',
  },
  {
    code: 'missing_key',
    severity: 'error',
    yaml: edit('version: "1.0.0"\n', ''),
    line: 1,
    column: 1,
    path: [],
    mentions: 'version',
  },
  {
    code: 'unknown_key',
    severity: 'error',
    yaml: edit('    transitions:\n      on_tool_call:\n        save_name', '    transition:\n      on_tool_call:\n        save_name'),
    line: 22,
    column: 5,
    path: ['states', 'ask', 'transition'],
    mentions: 'did you mean "transitions"',
  },
  {
    code: 'wrong_type',
    severity: 'error',
    yaml: edit('version: "1.0.0"', 'version: 1.0'),
    line: 2,
    column: 10,
    path: ['version'],
    mentions: '"1.0"',
  },
  {
    code: 'wrong_type',
    severity: 'error',
    yaml: edit('      tools: [save_name]', '      tools: save_name'),
    line: 13,
    column: 14,
    path: ['states', 'ask', 'agent', 'tools'],
    mentions: 'list',
  },
  {
    code: 'invalid_parameter_type',
    severity: 'error',
    yaml: edit('            type: string', '            type: text'),
    line: 19,
    column: 19,
    path: ['states', 'ask', 'tools', 'save_name', 'parameters', 'name', 'type'],
    mentions: 'string, number, integer, boolean',
  },
  {
    code: 'invalid_tool_name',
    severity: 'error',
    yaml: edit('      restart:\n        description', '      "re start":\n        description'),
    line: 30,
    column: 7,
    path: ['states', 'done', 'tools', 're start'],
    mentions: '64',
  },
  {
    code: 'invalid_parameter_name',
    severity: 'error',
    yaml: edit('          name:\n            type', '          2name:\n            type'),
    line: 18,
    column: 11,
    path: ['states', 'ask', 'tools', 'save_name', 'parameters', '2name'],
    mentions: 'placeholder',
  },
  {
    code: 'no_states',
    severity: 'error',
    yaml: 'id: x\nversion: "1"\ninitial_state: a\nstates: {}\n',
    line: 4,
    column: 1,
    path: ['states'],
    mentions: 'at least one state',
  },
  {
    code: 'unknown_initial_state',
    severity: 'error',
    yaml: edit('initial_state: ask', 'initial_state: asking'),
    line: 3,
    column: 16,
    path: ['initial_state'],
    mentions: 'asking',
  },
  {
    code: 'undefined_tool',
    severity: 'error',
    yaml: edit('      tools: [restart]', '      tools: [restart, hang_up]'),
    line: 28,
    column: 24,
    path: ['states', 'done', 'agent', 'tools', 1],
    mentions: 'hang_up',
  },
  {
    code: 'transition_from_unlisted_tool',
    severity: 'error',
    yaml: edit('        restart: ask', '        restart: ask\n        hang_up: ask'),
    line: 35,
    column: 9,
    path: ['states', 'done', 'transitions', 'on_tool_call', 'hang_up'],
    mentions: 'hang_up',
  },
  {
    code: 'unknown_target_state',
    severity: 'error',
    yaml: edit('        save_name: done', '        save_name: finished'),
    line: 24,
    column: 20,
    path: ['states', 'ask', 'transitions', 'on_tool_call', 'save_name'],
    mentions: 'finished',
  },
  {
    code: 'unreachable_state',
    severity: 'warning',
    yaml: VALID + '  orphan:\n    agent:\n      prompt: Nobody comes here.\n',
    line: 35,
    column: 3,
    path: ['states', 'orphan'],
    mentions: 'orphan',
  },
  {
    code: 'dead_end_state',
    severity: 'warning',
    yaml: edit('    transitions:\n      on_tool_call:\n        restart: ask\n', ''),
    line: 25,
    column: 3,
    path: ['states', 'done'],
    mentions: 'no way out',
  },
  {
    code: 'unresolved_placeholder',
    severity: 'warning',
    yaml: edit('      prompt: Say goodbye to {name}.', '      prompt: Say goodbye to {name} from {city}.'),
    line: 27,
    column: 42,
    path: ['states', 'done', 'agent', 'prompt'],
    mentions: '{city}',
  },
  {
    code: 'unlisted_tool',
    severity: 'warning',
    yaml: edit('      restart:\n', '      transfer:\n        description: Not listed.\n      restart:\n'),
    line: 30,
    column: 7,
    path: ['states', 'done', 'tools', 'transfer'],
    mentions: 'never call',
  },
  {
    code: 'duplicate_tool_listing',
    severity: 'warning',
    yaml: edit('      tools: [restart]', '      tools: [restart, restart]'),
    line: 28,
    column: 24,
    path: ['states', 'done', 'agent', 'tools', 1],
    mentions: 'more than once',
  },
  {
    code: 'version_not_semver',
    severity: 'warning',
    yaml: edit('version: "1.0.0"', 'version: "first"'),
    line: 2,
    column: 10,
    path: ['version'],
    mentions: 'first',
  },
];

describe('flow diagnostics', () => {
  it('accepts the valid fixture with no diagnostics at all', () => {
    const result = parseFlow(VALID);
    expect(result.diagnostics).toEqual([]);
    expect(result.document?.states.ask?.agent.tools).toEqual(['save_name']);
  });

  it.each(cases)('reports $code at line $line, column $column', (c) => {
    const result = parseFlow(c.yaml);
    const found = result.diagnostics.find((d) => d.code === c.code);
    expect(found, JSON.stringify(result.diagnostics, null, 1)).toBeDefined();
    expect(found).toMatchObject({ severity: c.severity, line: c.line, column: c.column, path: c.path });
    expect(found!.message).toContain(c.mentions);
    if (c.severity === 'error') expect(result.document).toBeNull();
    else expect(result.document).not.toBeNull();
  });

  it('covers every diagnostic code the validator can report', () => {
    // The extended keys' codes have their cases in extended-diagnostic-cases.ts, the phone keys' in phone-diagnostic-cases.ts.
    const covered = new Set([...cases, ...EXTENDED_CASES, ...PHONE_CASES].map((c) => c.code));
    covered.add('document_too_large').add('too_many_aliases').add('too_deeply_nested');
    // A state's group name: groups.test.ts breaks it five ways.
    covered.add('invalid_group_name');
    // Turn-taking's own check: turn-keys-diagnostics.test.ts.
    covered.add('turn_wait_below_base');
    // settings.outcome and settings.success: outcome-settings.test.ts breaks each of their rules.
    covered.add('invalid_outcome_type').add('invalid_outcome_field').add('invalid_success_criterion');
    // The Pipecat converter's codes are not the validator's: pipecat-import.test.ts covers them.
    const validatorCodes = Object.keys(DIAGNOSTIC_CODES).filter((code) => !code.startsWith('pipecat_'));
    expect([...covered].sort()).toEqual(validatorCodes.sort());
  });

  it('reports each code at the severity the code list gives it', () => {
    for (const c of cases) {
      for (const d of parseFlow(c.yaml).diagnostics) {
        expect(DIAGNOSTIC_CODES, d.code).toHaveProperty(d.code);
        expect(d.severity, `${d.code}: ${d.message}`).toBe(DIAGNOSTIC_CODES[d.code]);
      }
    }
  });

  it('tells a designer who wrote version: 1.0 to write "1.0" in quotes, naming what they wrote', () => {
    const found = parseFlow(VALID.replace('version: "1.0.0"', 'version: 1.0')).diagnostics.find((d) => d.code === 'wrong_type');
    expect(found?.message).toBe('version must be text: write "1.0" in quotes (without them YAML reads 1.0 as a number)');
    const yes = parseFlow(VALID.replace('version: "1.0.0"', 'version: true')).diagnostics.find((d) => d.code === 'wrong_type');
    expect(yes?.message).toBe('version must be text: write "true" in quotes (without them YAML reads true as a boolean)');
  });

  it('reports every problem of a document at once, errors before warnings', () => {
    const broken = VALID.replace('initial_state: ask', 'initial_state: nowhere')
      .replace('version: "1.0.0"', 'version: 2')
      .replace('        save_name: done', '        save_name: finished')
      .replace('      tools: [restart]', '      tools: [restart, restart]');
    const codes = parseFlow(broken).diagnostics.map((d) => `${d.severity}:${d.code}`);
    expect(codes).toEqual([
      'error:wrong_type',
      'error:unknown_initial_state',
      'error:unknown_target_state',
      // "ask" now leads only to a state that does not exist, so nothing leaves it.
      'warning:dead_end_state',
      'warning:duplicate_tool_listing',
    ]);
  });

  it('points at a placeholder inside a block literal on its own line', () => {
    const yaml = edit(
      '      prompt: Say goodbye to {name}.',
      '      prompt: |\n        Say goodbye.\n        Mention {weather} and {name}.',
    );
    const found = parseFlow(yaml).diagnostics.find((d) => d.code === 'unresolved_placeholder');
    expect(found).toMatchObject({ line: 29, column: 17 });
  });

  it('explains an empty document and a document that is not a map', () => {
    expect(parseFlow('').diagnostics[0]).toMatchObject({ code: 'wrong_type', message: expect.stringContaining('empty') });
    expect(parseFlow('- a\n- b\n').diagnostics[0]).toMatchObject({ code: 'wrong_type', message: expect.stringContaining('map') });
  });

  it('treats a tool listed and defined in another state as undefined here', () => {
    const yaml = edit('      tools: [restart]', '      tools: [restart, save_name]');
    expect(parseFlow(yaml).diagnostics.map((d) => d.code)).toContain('undefined_tool');
  });
});
