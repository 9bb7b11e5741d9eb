// One account's flow uploads and edits must not stall everyone else. Parsing and
// editing a flow runs in worker threads (server/jobs), each job within a CPU budget, and an
// account has at most two jobs under way. Before, a 255 KiB document held the thread that
// answers every request (and paces every call's audio) for 1.6–4.6 s.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount, startTestServer, type TestServer } from '../../support/server.ts';
import { oneLineStatesYaml } from '../../support/one-line-flows.ts';
import { expectError } from '../error-shape.ts';

const SMALL = oneLineStatesYaml(2);
/** 2,000 one-line states, 253 KiB: just under the document limit. */
const BIG = oneLineStatesYaml(2000);
/** 1,767 states, 223 KiB: room for every prompt to grow under the document limit. */
const ISSUE_SIZED = oneLineStatesYaml(1767);

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * Asks for /health, a request every `intervalMs`, until `until` settles; each answer's time in ms.
 * Each request costs the main thread some CPU too (client and server share it here), in
 * proportion to the wall time the work takes, which a loaded machine stretches: the interval is
 * long enough to keep that small beside what is measured.
 */
async function healthLatencies(target: TestServer, until: Promise<unknown>, intervalMs = 100): Promise<number[]> {
  let done = false;
  until.then(
    () => (done = true),
    () => (done = true),
  );
  const latencies: number[] = [];
  while (!done) {
    const start = performance.now();
    const health = await target.request('GET', '/health');
    latencies.push(performance.now() - start);
    expect(health.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return latencies;
}

/**
 * The main thread's CPU for one /health request (client and server), measured before the work:
 * the polls during the work are taken back out of what the work cost the main thread, since
 * their number grows with the wall time a loaded machine stretches (beside a second npm test,
 * 405 polls once cost more main-thread CPU than the edit and the upload did).
 */
async function mainCpuPerPoll(target: TestServer, polls = 40): Promise<number> {
  const before = cpuMs().main;
  for (let i = 0; i < polls; i++) await target.request('GET', '/health');
  return (cpuMs().main - before) / polls;
}

const p99 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.99) - 1]!;

/**
 * CPU time, in ms, of the thread that answers requests (this process's main thread: the test
 * server runs in the test's own process) and of the whole process (every thread: the flow-job
 * workers among them). CPU time, unlike a request's wall time, does not grow when another
 * process takes the cores, so what it says holds on a loaded machine too.
 */
function cpuMs(): { main: number; all: number } {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const [utime, stime] = stat.slice(stat.lastIndexOf(')') + 2).split(' ').slice(11, 13).map(Number);
  const usage = process.cpuUsage();
  // Clock ticks of 10 ms (USER_HZ is 100 on Linux).
  return { main: (utime! + stime!) * 10, all: (usage.user + usage.system) / 1000 };
}

/** The CPU spent on the main thread and on the other threads while `work` ran. */
async function cpuDuring<T>(work: Promise<T>): Promise<{ main: number; others: number }> {
  const before = cpuMs();
  await work.catch(() => {});
  const after = cpuMs();
  const main = after.main - before.main;
  return { main, others: after.all - before.all - main };
}

describe('a flow document over the time budget', () => {
  it('is refused with 422 flow_too_complex, /health answering at once meanwhile, and the next flow is taken', { timeout: 60_000 }, async () => {
    server = await startTestServer({ limits: { flowJobBudgetMs: 60, flowWorkers: 1 } });
    const { apiKey } = await createAccount(server);
    // A first flow starts the worker, so the budget below is spent on the big document alone.
    expect((await server.request('POST', '/v1/flows', { apiKey, body: { name: 'Small', yaml_content: SMALL } })).status).toBe(201);

    const perPoll = await mainCpuPerPoll(server);
    const upload = server.request('POST', '/v1/flows', { apiKey, body: { name: 'Big', yaml_content: BIG } });
    const cpu = cpuDuring(upload);
    const latencies = await healthLatencies(server, upload);
    const refused = await upload;
    expectError(refused, 422, 'flow_too_complex');
    expect(refused.body.error.message).toContain('60 ms');
    // /health kept answering all along, and the thread that answers it did little: on the main
    // thread, parsing 2,000 states took 1.6–4.6 s of its CPU and held every request meanwhile.
    // (Latencies are in the message for whoever reads a failure; a loaded machine stretches them.)
    // The polls are taken back out, as below: a loaded machine stretches their number and cost.
    const spent = await cpu;
    const workMain = Math.max(0, spent.main - perPoll * latencies.length);
    expect(workMain, `main thread ${spent.main} ms of CPU (${workMain.toFixed(0)} ms without the polls at ${perPoll.toFixed(2)} ms each); /health took ${latencies.map((ms) => ms.toFixed(0)).join(', ')} ms`).toBeLessThan(300);

    // The worker that ran over was replaced: the pool still takes flows.
    expect((await server.request('POST', '/v1/flows', { apiKey, body: { name: 'Small again', yaml_content: SMALL } })).status).toBe(201);
    const list = await server.request('GET', '/v1/flows', { apiKey });
    expect(list.body.map((f: { name: string }) => f.name).sort()).toEqual(['Small', 'Small again']);
  });
});

describe('one account editing every state of a 1,767-state flow and uploading it again', () => {
  it('does the work off the thread that answers requests, /health answering all along', { timeout: 180_000 }, async () => {
    // A budget no edit of this document reaches even on a busy machine: this test is about the
    // thread that answers requests, not about refusals.
    server = await startTestServer({ limits: { flowJobBudgetMs: 60_000, flowWorkers: 1 } });
    const { apiKey } = await createAccount(server);
    const created = await server.request('POST', '/v1/flows', { apiKey, body: { name: 'Big', yaml_content: ISSUE_SIZED } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const json = (await server.request('GET', `/v1/flows/${id}/json`, { apiKey })).body as { states: Record<string, { agent: { prompt: string } }> };

    const perPoll = await mainCpuPerPoll(server);
    const target = server;
    // Every prompt changed: the costliest edit the visual editor can send (about a second of CPU
    // here when the machine is quiet), then the whole document uploaded again. Once each: running
    // them twice (as this did) cost 3 s of CPU per store and asked nothing new.
    const loop = (async () => {
      for (const state of Object.values(json.states)) state.agent.prompt = `Edited: ${state.agent.prompt}`;
      const edited = await target.request('PUT', `/v1/flows/${id}/json`, { apiKey, body: json });
      expect(edited.status, edited.text.slice(0, 300)).toBe(200);
      expect(edited.body.yaml_content).toContain('Edited: ');
      const uploaded = await target.request('POST', '/v1/flows', { apiKey, body: { name: 'Big again', yaml_content: ISSUE_SIZED } });
      expect(uploaded.status, uploaded.text.slice(0, 300)).toBe(201);
    })();
    const cpu = cpuDuring(loop);
    const latencies = await healthLatencies(server, loop, 250);
    await loop;
    const spent = await cpu;
    // The edit and the upload cost about a second of CPU: nearly all of it on the workers. On the
    // main thread they held /health for their whole length. (/health's latencies are printed for
    // whoever reads a failure: on a loaded machine they stretch with everything else.)
    const latencyNote = `/health p99 ${p99(latencies).toFixed(0)} ms over ${latencies.length} requests; slowest ${Math.max(...latencies).toFixed(0)} ms`;
    expect(spent.others, latencyNote).toBeGreaterThan(200);
    // Measured here: 0.03 without the polling (main thread 140 ms, workers about 3.5 s of CPU), 0.11
    // polling every 100 ms on a machine loaded by other work; parsed on the main thread it is over 1.
    const workMain = Math.max(0, spent.main - perPoll * latencies.length);
    expect(workMain / spent.others, `main thread ${spent.main} ms of CPU (${workMain.toFixed(0)} ms without the polls at ${perPoll.toFixed(2)} ms each), workers ${spent.others.toFixed(0)} ms; ${latencyNote}`).toBeLessThan(0.25);
    // Answers kept coming all along, not a few between long stalls.
    expect(latencies.length).toBeGreaterThan(5);
  });
});

describe('flow jobs of one account', () => {
  it('are at most two at once: a third gets 429 rate_limited with Retry-After, while another account is served', { timeout: 60_000 }, async () => {
    server = await startTestServer({ limits: { flowJobBudgetMs: 60_000, flowWorkers: 1 } });
    const busy = await createAccount(server);
    const other = await createAccount(server);
    // Sent together to a pool whose worker has yet to start: all three wait at once.
    const uploads = [1, 2, 3].map((n) => server!.request('POST', '/v1/flows', { apiKey: busy.apiKey, body: { name: `Big ${n}`, yaml_content: BIG } }));
    const others = server.request('POST', '/v1/flows', { apiKey: other.apiKey, body: { name: 'Theirs', yaml_content: SMALL } });
    const answers = await Promise.all(uploads);
    const refused = answers.filter((a) => a.status === 429);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 429]);
    expectError(refused[0]!, 429, 'rate_limited');
    expect(refused[0]!.headers.get('retry-after')).toBe('1');
    expect(refused[0]!.body.error.message).toMatch(/flow documents/);
    expect((await others).status).toBe(201);
    // Once answered, the account may send again.
    expect((await server.request('POST', '/v1/flows', { apiKey: busy.apiKey, body: { name: 'Next', yaml_content: SMALL } })).status).toBe(201);
  });
});
