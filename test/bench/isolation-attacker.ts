// The noisy tenant of isolation.bench.ts, in its own process: for `seconds`, loops uploads of a
// big flow (POST /v1/flows) and JSON edits of it (PUT /v1/flows/{id}/json), one request at a
// time, and polls GET /health every 20 ms on another connection. Prints one JSON summary.
// Args: baseUrl apiKey seconds [requests: stop after this many noisy requests, however long they take]
// [no-health: no polling | health-only: the polls alone, for the calls-alone figure]
export {};

const [baseUrl, apiKey, secondsArg, requestsArg, healthArg] = process.argv.slice(2) as [string, string, string, string | undefined, string | undefined];
const until = performance.now() + Number(secondsArg) * 1000;
const maxRequests = requestsArg === undefined ? Infinity : Number(requestsArg);
const going = () => performance.now() < until && requestMs.length < maxRequests;

/**
 * About 255 KiB of YAML: 1,767 one-line states, each one's tool leading to the next (the shape that
 * once stalled every call).
 */
function bigFlow(): string {
  const count = 1_767;
  const lines = ['id: big', 'version: "1.0.0"', 'initial_state: s0', 'states:'];
  for (let i = 0; i < count; i++) {
    lines.push(`  s${i}: {agent: {prompt: "Step ${i} of the long form.", tools: [go]}, tools: {go: {description: Next.}}, transitions: {on_tool_call: {go: s${(i + 1) % count}}}}`);
  }
  const text = `${lines.join('\n')}\n`;
  // Pad the first prompt to 255 KiB in all, so the figure matches the document.
  return text.replace('Step 0 of the long form.', `Step 0 of the long form.${' and so on'.repeat(Math.max(0, Math.floor((255 * 1024 - text.length) / 10)))}`);
}

const headers = { 'content-type': 'application/json', 'x-service-key': apiKey };
const yaml = bigFlow();
const statuses: Record<string, number> = {};
const requestMs: number[] = [];
let flowId: string | null = null;
let json: unknown = null;

async function noisy(): Promise<void> {
  while (going()) {
    const started = performance.now();
    let response: Response;
    if (!flowId || !json) {
      response = await fetch(`${baseUrl}/v1/flows`, { method: 'POST', headers, body: JSON.stringify({ name: 'Big', yaml_content: yaml }) });
      const body = (await response.json()) as { id?: string };
      if (response.status === 201 && body.id) {
        flowId = body.id;
        const got = await fetch(`${baseUrl}/v1/flows/${flowId}/json`, { headers });
        json = got.status === 200 ? await got.json() : null;
      }
    } else {
      response = await fetch(`${baseUrl}/v1/flows/${flowId}/json`, { method: 'PUT', headers, body: JSON.stringify(json) });
      await response.arrayBuffer();
      flowId = null; // next round uploads again
    }
    requestMs.push(performance.now() - started);
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
  }
}

const healthMs: number[] = [];
async function health(): Promise<void> {
  while (going()) {
    const started = performance.now();
    const response = await fetch(`${baseUrl}/health`);
    await response.arrayBuffer();
    healthMs.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

await Promise.all([healthArg === 'health-only' ? Promise.resolve() : noisy(), healthArg === 'no-health' ? Promise.resolve() : health()]);
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const pct = (xs: number[], p: number) => (xs.length === 0 ? NaN : sorted(xs)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!);
process.stdout.write(
  JSON.stringify({
    bytes: yaml.length,
    requests: requestMs.length,
    statuses,
    requestP50: pct(requestMs, 50),
    healthP50: pct(healthMs, 50),
    healthP99: pct(healthMs, 99),
    healthMax: pct(healthMs, 100),
    healthPolls: healthMs.length,
    healthSamples: healthMs.map((ms) => Math.round(ms * 100) / 100),
  }) + '\n',
);
