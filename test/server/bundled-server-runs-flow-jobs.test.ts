// The esbuild bundle (`npm run build:server`, what `npm run serve` runs) parses and edits flows
// in its worker threads too: the worker is built as flow-worker.mjs beside main.mjs, where the
// pool looks for it, and the CPU budget holds there as from the sources.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { oneLineStatesYaml } from '../support/one-line-flows.ts';
import { serverBundle } from '../support/server-bundle.ts';
import { spawnServer, type ServerProcess } from '../support/spawn-server.ts';

// A budget a two-state flow stays far under and 2,000 states exceed on any machine.
const BUDGET_MS = 50;
let dataDir = '';
let server: ServerProcess | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'voxflow-bundle-jobs-'));
  // This run's bundle (test/support/server-bundle.ts), built by the same script as dist/server.
  server = await spawnServer(['--data-dir', dataDir, '--flow-job-budget-ms', String(BUDGET_MS)], {}, 60_000, [serverBundle()]);
}, 90_000);
afterAll(async () => {
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  await rm(dataDir, { recursive: true, force: true });
});

async function call(method: string, path: string, token: string | null, body?: unknown) {
  const response = await fetch(`${server!.url}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

test('the bundle validates, converts and edits flows in its workers, and refuses one over the budget with 422', { timeout: 60_000 }, async () => {
  const signup = await call('POST', '/auth/signup', null, { email: 'jobs@example.com', password: 'long enough password' });
  expect(signup.status).toBe(200);
  const token = signup.body.access_token as string;

  const created = await call('POST', '/v1/flows', token, { name: 'Two states', yaml_content: oneLineStatesYaml(2) });
  expect(created.status).toBe(201);
  const json = await call('GET', `/v1/flows/${created.body.id}/json`, token);
  expect(json.status).toBe(200);
  expect(Object.keys(json.body.states)).toEqual(['s0', 's1']);
  json.body.states.s1.agent.prompt = 'Say goodbye.';
  const edited = await call('PUT', `/v1/flows/${created.body.id}/json`, token, json.body);
  expect(edited.status).toBe(200);
  expect(edited.body.yaml_content).toContain('prompt: "Say goodbye."');

  const big = await call('POST', '/v1/flows', token, { name: 'Big', yaml_content: oneLineStatesYaml(2000) });
  expect(big.status).toBe(422);
  expect(big.body.error.code).toBe('flow_too_complex');
  expect(big.body.error.message).toContain(`${BUDGET_MS} ms`);
  // The worker that ran over was replaced.
  expect((await call('POST', '/v1/flows', token, { name: 'After', yaml_content: oneLineStatesYaml(3) })).status).toBe(201);
  expect((await fetch(`${server!.url}/health`)).status).toBe(200);
});

test('the bundle stops cleanly on SIGTERM with its flow workers running', { timeout: 30_000 }, async () => {
  server!.child.kill('SIGTERM');
  expect((await server!.exited).code).toBe(0);
  server = undefined;
});
