// Builds flow documents for benches and tests: large valid ones (a chain of states with a skip
// branch and a loop back, three tools per state, parameters, a speech cue and placeholders,
// compact enough that 500 states stay under the 256 KiB limit at about 430 bytes a state), and a
// hostile one. With `groupEvery`, each run of that many states along the chain is one group
// (`part0` holds s0 to s19 for 20), as a designer would group the steps of one task; 500 grouped
// states are about 250 KiB.

export function generateFlowYaml(stateCount: number, options: { groupEvery?: number } = {}): string {
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
      ...(options.groupEvery ? [`    group: part${Math.floor(i / options.groupEvery)}`] : []),
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

/** Nine levels of ten YAML aliases: 80 alias nodes, a billion strings once expanded. */
export function aliasBomb(): string {
  const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  const names = 'abcdefghi';
  for (let i = 1; i < names.length; i++) {
    levels.push(`${names[i]}: &${names[i]} [${Array(10).fill(`*${names[i - 1]}`).join(',')}]`);
  }
  return levels.join('\n');
}
