/** A valid flow of about `kib` KiB: a chain of one-line states (for quotas and size limits). */
export function flowOfAbout(kib: number, tag: string): string {
  const states = Math.max(2, Math.floor((kib * 1024) / 150));
  const lines = [`id: big-${tag}`, 'version: "1.0.0"', 'initial_state: s0', 'states:'];
  for (let i = 0; i < states; i++) {
    lines.push(`  s${i}: {agent: {prompt: "Step ${i} of ${tag}, said in a long sentence.", tools: [go]}, tools: {go: {description: Next.}}, transitions: {on_tool_call: {go: s${(i + 1) % states}}}}`);
  }
  return `${lines.join('\n')}\n`;
}
