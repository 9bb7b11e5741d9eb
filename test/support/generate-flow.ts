// Builds large, valid flow documents for benches and tests: a chain of states with a skip branch
// and a loop back, three tools per state, parameters, a speech cue and placeholders. Compact
// enough that 500 states stay under the 256 KiB document limit (about 430 bytes a state).

export function generateFlowYaml(stateCount: number): string {
  const lines = [
    '# generated flow',
    'id: generated',
    'version: "1.0.0"',
    'initial_state: s0',
    'settings:',
    '  base_system_prompt: You are a patient assistant that follows the flow step by step.',
    'states:',
  ];
  for (let i = 0; i < stateCount; i++) {
    const next = `s${(i + 1) % stateCount}`;
    const skip = `s${(i + 2) % stateCount}`;
    lines.push(
      `  s${i}:`,
      `    ui: { artifact_type: card, prompt: "Step ${i}: {a${i}}" }`,
      '    agent:',
      `      prompt: Step ${i}; last answer {a${i}}. Ask, then record.`,
      `      tools: [rec${i}, next${i}, skip${i}]`,
      '    tools:',
      `      rec${i}: { description: Record it., speech_cue: Noted., parameters: { a${i}: { type: string, required: true } } }`,
      `      next${i}: { description: Go on. }`,
      `      skip${i}: { description: Skip one., parameters: { n: { type: integer } } }`,
      `    transitions: { on_tool_call: { next${i}: ${next}, skip${i}: ${skip} } }`,
    );
  }
  return lines.join('\n') + '\n';
}
