// An experiment splits new sessions among its arms by weight (docs/api.md#experiments): a thousand
// session starts over real HTTP, counted. Which arm a session gets is the engine's choice, made
// the same whatever the store; what the store keeps of it (each session's experiment and arm, the
// per-arm counts) is asked on PostgreSQL too, by experiments.test.ts, which this was split from.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, startTestServer, type TestServer } from '../../support/server.ts';
import { inTurn, twoVersionFlow } from '../experiment-flows.ts';

let server: TestServer;
let account: Awaited<ReturnType<typeof createAccount>>;

beforeAll(async () => {
  server = await startTestServer();
  account = await createAccount(server);
}, 120_000);
afterAll(async () => {
  await server?.close();
});

describe('an experiment between published versions', () => {
  it('splits 1,000 new sessions 50/50 within binomial bounds, and shows each its arm', { timeout: 300_000 }, async () => {
    const flowId = await twoVersionFlow(server, account.apiKey);
    const started = await server.request('POST', `/v1/flows/${flowId}/experiments`, { jwt: account.jwt, body: { name: 'Shorter greeting', arms: [{ version: 1, weight: 50 }, { version: 2, weight: 50 }] } });
    expect(started.status, started.text).toBe(201);
    expect(started.body).toMatchObject({ flow_id: flowId, name: 'Shorter greeting', status: 'running', stopped_at: null, winner: null });
    const experimentId = started.body.id as string;

    const arms = await inTurn(Array.from({ length: 1000 }, (_, i) => i), 8, async () => {
      const made = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: { flow_id: flowId } });
      expect(made.status, made.text).toBe(200);
      expect(made.body.experiment_id).toBe(experimentId);
      return made.body.experiment_arm as number;
    });
    const onOne = arms.filter((arm) => arm === 1).length;
    expect(arms.filter((arm) => arm === 2).length).toBe(1000 - onOne);
    // 500 ± 4σ, σ = √(1000 · ½ · ½) ≈ 15.8.
    expect(Math.abs(onOne - 500)).toBeLessThanOrEqual(63);

    const detail = await server.request('GET', `/v1/flows/${flowId}/experiments/${experimentId}`, { apiKey: account.apiKey });
    expect(detail.status, detail.text).toBe(200);
    expect(detail.body.results.map((arm: { version: number; sessions: number; calls: number }) => [arm.version, arm.sessions, arm.calls])).toEqual([
      [1, onOne, 0],
      [2, 1000 - onOne, 0],
    ]);
    const listed = await server.request('GET', `/v1/sessions?flow_id=${flowId}`, { apiKey: account.apiKey });
    expect(listed.status).toBe(200);
    for (const session of listed.body) {
      expect(session.experiment_id).toBe(experimentId);
      expect([1, 2]).toContain(session.experiment_arm);
    }
  });
});
