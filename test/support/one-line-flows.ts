// Large flow documents of one shape each, for measuring how the flow model's cost grows with a
// document. The shape that once stalled every call: thousands of states of one line each, every
// state's one tool leading to the next (2,000 of them stay under the 256 KiB limit), optionally
// with long prompts; and shapes that once cost the square of their size: thousands of diagnostics,
// one map of thousands of keys, one prompt of thousands of placeholders.

const HEAD = ['id: big', 'version: "1.0.0"', 'initial_state: s0', 'states:'];

/** `promptChars` pads every prompt with that many characters of text. */
export function oneLineStatesYaml(stateCount: number, promptChars = 0): string {
  const padding = promptChars > 0 ? ` ${'lorem ipsum dolor sit amet '.repeat(Math.ceil(promptChars / 27)).slice(0, promptChars)}` : '';
  const lines = [...HEAD];
  for (let i = 0; i < stateCount; i++) {
    const next = `s${(i + 1) % stateCount}`;
    lines.push(`  s${i}: {agent: {prompt: "Step ${i}.${padding}", tools: [go]}, tools: {go: {description: Next.}}, transitions: {on_tool_call: {go: ${next}}}}`);
  }
  return `${lines.join('\n')}\n`;
}

/** States that lead nowhere: each is a dead end, unreachable, and has an unset placeholder. */
export function statesWithWarningsYaml(stateCount: number): string {
  const lines = [...HEAD];
  for (let i = 0; i < stateCount; i++) lines.push(`  s${i}: {agent: {prompt: "Say {x${i}}."}}`);
  return `${lines.join('\n')}\n`;
}

/** One state, then `keyCount` unknown top-level keys: one map of that many keys. */
export function manyTopLevelKeysYaml(keyCount: number): string {
  const lines = [...HEAD, '  s0: {agent: {prompt: Hi}}'];
  for (let i = 0; i < keyCount; i++) lines.push(`k${i}: 1`);
  return `${lines.join('\n')}\n`;
}

/** One prompt holding `count` different placeholders that no tool sets. */
export function manyPlaceholdersYaml(count: number): string {
  const prompt = Array.from({ length: count }, (_, i) => `{p${i}}`).join(' ');
  return `${[...HEAD, `  s0: {agent: {prompt: "${prompt}"}}`].join('\n')}\n`;
}
