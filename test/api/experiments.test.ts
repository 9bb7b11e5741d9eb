// A/B experiments between a flow's published versions (docs/api.md#experiments), over real HTTP
// and WebSocket: new sessions sticky per caller id, each runs its arm's version, stop and
// conclude, the errors, and the per-arm results counted against the sessions. The split of a
// thousand new sessions by weight, the engine's choice whatever the store, runs once, on the
// embedded store: not-about-the-store/experiments-split-new-sessions-by-weight.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, startTestServer, type TestServer } from '../support/server.ts';
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { expectError } from './error-shape.ts';
import { bookingFlow, inTurn, twoVersionFlow as twoVersionFlowOf } from './experiment-flows.ts';

type Account = Awaited<ReturnType<typeof createAccount>>;

let server: TestServer;
let account: Account;
let other: Account;

beforeAll(async () => {
  server = await startTestServer();
  [account, other] = [await createAccount(server), await createAccount(server)];
}, 120_000);
afterAll(async () => {
  await server?.close();
});

/** A flow with versions 1 (first state `one`) and 2 (first state `two`), 2 published. */
const twoVersionFlow = (owner: Account = account) => twoVersionFlowOf(server, owner.apiKey);

const startExperiment = (flowId: string, body: unknown, owner: Account = account) =>
  server.request('POST', `/v1/flows/${flowId}/experiments`, { jwt: owner.jwt, body });

const fiftyFifty = { name: 'Shorter greeting', arms: [{ version: 1, weight: 50 }, { version: 2, weight: 50 }] };

const newSession = (flowId: string, metadata?: Record<string, unknown>) =>
  server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: { flow_id: flowId, ...(metadata ? { metadata } : {}) } });

describe('experiments between published versions', () => {
  it('gives a caller id the same arm every time, and spreads different callers', { timeout: 120_000 }, async () => {
    const flowId = await twoVersionFlow();
    expect((await startExperiment(flowId, fiftyFifty)).status).toBe(201);
    for (const caller of ['+15550001111', 'customer-42']) {
      const arms = new Set<number>();
      for (let i = 0; i < 20; i++) arms.add((await newSession(flowId, { caller_id: caller })).body.experiment_arm as number);
      expect(arms.size, `caller ${caller} got arms ${[...arms].join(', ')}`).toBe(1);
    }
    const spread = await inTurn(Array.from({ length: 40 }, (_, i) => `+1555000${String(i).padStart(4, '0')}`), 4, async (caller) => (await newSession(flowId, { caller_id: caller })).body.experiment_arm as number);
    // Forty callers all on one side of a fair split: 2 · 2⁻⁴⁰.
    expect(new Set(spread)).toEqual(new Set([1, 2]));
  });

  it('runs the version of the arm a session was given, and stop ends the assignments while sessions keep theirs', { timeout: 120_000 }, async () => {
    const flowId = await twoVersionFlow();
    const experimentId = (await startExperiment(flowId, { name: 'All on one', arms: [{ version: 1, weight: 1 }, { version: 2, weight: 1 }] })).body.id as string;
    // A caller id whose arm is version 1 (not the published one): find one.
    let caller = '';
    for (let i = 0; ; i++) {
      const made = await newSession(flowId, { caller_id: `caller-${i}` });
      if (made.body.experiment_arm === 1) {
        caller = `caller-${i}`;
        break;
      }
    }
    const made = await newSession(flowId, { caller_id: caller });
    expect(made.body.experiment_arm).toBe(1);

    const stopped = await server.request('POST', `/v1/flows/${flowId}/experiments/${experimentId}/stop`, { jwt: account.jwt });
    expect(stopped.status, stopped.text).toBe(200);
    expect(stopped.body.status).toBe('stopped');
    expect(stopped.body.stopped_at).toBeTypeOf('number');

    // Made before the stop: it still runs version 1, though 2 is published.
    const client = await connectVoice(made.body.ws_url);
    try {
      const begun = await client.waitFor('session_started', undefined, 15_000);
      expect((await client.waitFor('flow_state')).state).toBe('one');
      client.send({ type: 'end' });
      await client.waitFor('session_ended');
      const detail = await server.request('GET', `/v1/sessions/${begun.session_id}`, { apiKey: account.apiKey });
      expect(detail.body).toMatchObject({ experiment_id: experimentId, experiment_arm: 1, flow_version: 1 });
      // The list shows it with its experiment and arm too.
      const listed = await server.request('GET', `/v1/sessions?flow_id=${flowId}`, { apiKey: account.apiKey });
      expect(listed.body.find((s: { id: string }) => s.id === begun.session_id)).toMatchObject({ experiment_id: experimentId, experiment_arm: 1 });
    } finally {
      client.close();
      await client.closed;
    }
    // After the stop: no arm, the published version.
    const after = await newSession(flowId, { caller_id: caller });
    expect(after.body).toMatchObject({ experiment_id: null, experiment_arm: null });
    // A new experiment may start once the last one stopped.
    expect((await startExperiment(flowId, fiftyFifty)).status).toBe(201);
  });

  it('conclude stops the experiment and publishes the winner', { timeout: 60_000 }, async () => {
    const flowId = await twoVersionFlow();
    const experimentId = (await startExperiment(flowId, fiftyFifty)).body.id as string;
    const concluded = await server.request('POST', `/v1/flows/${flowId}/experiments/${experimentId}/conclude`, { jwt: account.jwt, body: { winner: 1 } });
    expect(concluded.status, concluded.text).toBe(200);
    expect(concluded.body).toMatchObject({ status: 'concluded', winner: 1 });
    const flow = await server.request('GET', `/v1/flows/${flowId}`, { apiKey: account.apiKey });
    // Version 1 published again, as a rollback does: a copy as version 3.
    expect(flow.body.published_version).toBe(3);
    expect(flow.body.yaml_content).toBe(bookingFlow('one'));
    const versions = await server.request('GET', `/v1/flows/${flowId}/versions`, { apiKey: account.apiKey });
    expect(versions.body[0].note).toContain('Shorter greeting');
    expect((await newSession(flowId)).body.experiment_id).toBeNull();
    expectError(await server.request('POST', `/v1/flows/${flowId}/experiments/${experimentId}/conclude`, { jwt: account.jwt, body: { winner: 2 } }), 409, 'experiment_concluded');
    const listed = await server.request('GET', `/v1/flows/${flowId}/experiments`, { apiKey: account.apiKey });
    expect(listed.body.map((e: { id: string; status: string }) => [e.id, e.status])).toEqual([[experimentId, 'concluded']]);
  });

  it('lists newest first', { timeout: 60_000 }, async () => {
    const flowId = await twoVersionFlow();
    const first = (await startExperiment(flowId, { ...fiftyFifty, name: 'First' })).body.id as string;
    await server.request('POST', `/v1/flows/${flowId}/experiments/${first}/stop`, { jwt: account.jwt });
    const second = (await startExperiment(flowId, { ...fiftyFifty, name: 'Second' })).body.id as string;
    const listed = await server.request('GET', `/v1/flows/${flowId}/experiments`, { jwt: account.jwt });
    expect(listed.body.map((e: { id: string }) => e.id)).toEqual([second, first]);
  });

  it('refuses what cannot run: unknown versions, a second running experiment, bad weights and unknown keys', { timeout: 60_000 }, async () => {
    const flowId = await twoVersionFlow();
    // A draft is no version: version 3 exists only as a draft.
    expect((await server.request('PUT', `/v1/flows/${flowId}/draft`, { jwt: account.jwt, body: { yaml_content: bookingFlow('three') } })).status).toBe(200);
    expectError(await startExperiment(flowId, { name: 'Draft', arms: [{ version: 2, weight: 1 }, { version: 3, weight: 1 }] }), 409, 'version_not_published');
    expectError(await startExperiment(flowId, { name: 'Bad', arms: [{ version: 1, weight: 0 }, { version: 2, weight: 1 }] }), 422, 'invalid_request');
    expectError(await startExperiment(flowId, { name: 'Bad', arms: [{ version: 1, weight: 1.5 }, { version: 2, weight: 1 }] }), 422, 'invalid_request');
    expectError(await startExperiment(flowId, { name: 'Bad', arms: [{ version: 1, weight: 1 }] }), 422, 'invalid_request');
    expectError(await startExperiment(flowId, { name: 'Bad', arms: [{ version: 1, weight: 1 }, { version: 1, weight: 1 }] }), 422, 'invalid_request');
    expectError(await startExperiment(flowId, { ...fiftyFifty, colour: 'red' }), 422, 'invalid_request');
    expectError(await startExperiment(flowId, { name: 'Bad', arms: [{ version: 1, weight: 1, note: 'x' }, { version: 2, weight: 1 }] }), 422, 'invalid_request');
    expectError(await startExperiment(flowId, { arms: fiftyFifty.arms }), 422, 'invalid_request');
    // Nothing was made by any of them.
    expect((await server.request('GET', `/v1/flows/${flowId}/experiments`, { jwt: account.jwt })).body).toEqual([]);

    const running = (await startExperiment(flowId, fiftyFifty)).body.id as string;
    expectError(await startExperiment(flowId, fiftyFifty), 409, 'experiment_running');
    expectError(await server.request('POST', `/v1/flows/${flowId}/experiments/${running}/conclude`, { jwt: account.jwt, body: { winner: 7 } }), 422, 'invalid_request');
    expectError(await server.request('POST', `/v1/flows/${flowId}/experiments/${running}/conclude`, { jwt: account.jwt, body: {} }), 422, 'invalid_request');
    expectError(await server.request('GET', `/v1/flows/${flowId}/experiments/nope`, { jwt: account.jwt }), 404, 'experiment_not_found');
    expectError(await server.request('POST', `/v1/flows/${flowId}/experiments/nope/stop`, { jwt: account.jwt }), 404, 'experiment_not_found');
    expectError(await server.request('GET', '/v1/flows/nope/experiments', { jwt: account.jwt }), 404, 'flow_not_found');
    // Still running, untouched.
    expect((await server.request('GET', `/v1/flows/${flowId}/experiments/${running}`, { jwt: account.jwt })).body.status).toBe('running');
  });

  it('another account can neither see nor touch an experiment', { timeout: 60_000 }, async () => {
    const flowId = await twoVersionFlow();
    const experimentId = (await startExperiment(flowId, fiftyFifty)).body.id as string;
    const base = `/v1/flows/${flowId}/experiments`;
    expectError(await server.request('GET', base, { apiKey: other.apiKey }), 404, 'flow_not_found');
    expectError(await server.request('GET', `${base}/${experimentId}`, { apiKey: other.apiKey }), 404, 'flow_not_found');
    expectError(await server.request('POST', `${base}/${experimentId}/stop`, { jwt: other.jwt }), 404, 'flow_not_found');
    expectError(await server.request('POST', `${base}/${experimentId}/conclude`, { jwt: other.jwt, body: { winner: 1 } }), 404, 'flow_not_found');
    expectError(await startExperiment(flowId, fiftyFifty, other), 404, 'flow_not_found');
    // The other account's own flow cannot reach it either.
    const theirs = await twoVersionFlow(other);
    expectError(await server.request('GET', `/v1/flows/${theirs}/experiments/${experimentId}`, { jwt: other.jwt }), 404, 'experiment_not_found');
    expect((await server.request('GET', `${base}/${experimentId}`, { jwt: account.jwt })).body.status).toBe('running');
  });

  it('ends with its flow: a deleted flow leaves no experiment and gives no arm', { timeout: 60_000 }, async () => {
    const flowId = await twoVersionFlow();
    const experimentId = (await startExperiment(flowId, fiftyFifty)).body.id as string;
    expect((await newSession(flowId)).body.experiment_id).toBe(experimentId);
    expect((await server.request('DELETE', `/v1/flows/${flowId}`, { apiKey: account.apiKey })).status).toBe(204);
    expectError(await server.request('GET', `/v1/flows/${flowId}/experiments/${experimentId}`, { jwt: account.jwt }), 404, 'flow_not_found');
    expectError(await server.request('GET', `/v1/flows/${flowId}/experiments`, { jwt: account.jwt }), 404, 'flow_not_found');
    expectError(await newSession(flowId), 404, 'flow_not_found');
  });
});

describe('experiment results', () => {
  /** A real call over the engine router: the booking made (or not) by the simulator, then ended. */
  async function playCall(flowId: string, booked: boolean): Promise<string> {
    const client = await connectVoice(wsUrl(server.url, `/ws?mode=flow&program_id=${flowId}&access_token=${account.jwt}`));
    try {
      const started = await client.waitFor('session_started', undefined, 15_000);
      const first = await client.waitFor('flow_state');
      client.send({ type: 'simulate_tool', name: 'book', arguments: { slot: '7pm', booked, size: booked ? 'large' : 'small' } });
      await client.waitFor('flow_state', (e) => e.state === 'confirmed');
      client.send({ type: 'end' });
      await client.waitFor('session_ended');
      expect(['one', 'two']).toContain(first.state);
      return started.session_id as string;
    } finally {
      client.close();
      await client.closed;
    }
  }

  async function analysed(sessionId: string) {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const detail = await server.request('GET', `/v1/sessions/${sessionId}`, { apiKey: account.apiKey });
      if (detail.body.analysis_status === 'done') return detail.body;
      if (Date.now() > deadline) throw new Error(`not analysed: ${detail.text.slice(0, 500)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('per arm, counts and success rate equal a direct count of the sessions, with a 95 % interval', { timeout: 240_000 }, async () => {
    const flowId = await twoVersionFlow();
    const experimentId = (await startExperiment(flowId, fiftyFifty)).body.id as string;
    const details = [];
    for (let i = 0; i < 8; i++) details.push(await analysed(await playCall(flowId, i % 3 !== 0)));
    // An unclaimed session counts as a session of its arm, not as a call.
    const waiting = await newSession(flowId);

    const result = await server.request('GET', `/v1/flows/${flowId}/experiments/${experimentId}`, { apiKey: account.apiKey });
    expect(result.status, result.text).toBe(200);
    for (const arm of result.body.results) {
      const mine = details.filter((d) => d.experiment_arm === arm.version);
      // The version it ran is the arm's: its first state says so.
      for (const d of mine) expect(d.flow_version).toBe(arm.version);
      const yes = mine.filter((d) => d.success.value === true).length;
      const no = mine.filter((d) => d.success.value === false).length;
      expect(arm.calls).toBe(mine.length);
      expect(arm.sessions).toBe(mine.length + (waiting.body.experiment_arm === arm.version ? 1 : 0));
      expect(arm.success).toMatchObject({ true: yes, false: no, unknown: 0 });
      if (yes + no === 0) {
        expect(arm.success.rate).toBeNull();
      } else {
        expect(arm.success.rate.rate).toBeCloseTo(yes / (yes + no), 10);
        expect(arm.success.rate.low).toBeLessThanOrEqual(arm.success.rate.rate);
        expect(arm.success.rate.high).toBeGreaterThanOrEqual(arm.success.rate.rate);
        expect(arm.success.rate.high - arm.success.rate.low).toBeGreaterThan(0.1);
      }
      if (mine.length > 0) {
        const average = mine.reduce((sum, d) => sum + d.duration_secs, 0) / mine.length;
        expect(arm.average_duration_secs).toBeCloseTo(average, 6);
        expect(arm.outcomes.booked).toEqual({ present: mine.length, values: Object.fromEntries(Object.entries({ true: yes, false: no }).filter(([, n]) => n > 0)) });
        expect(arm.outcomes.size.values).toEqual(Object.fromEntries(Object.entries({ large: yes, small: no }).filter(([, n]) => n > 0)));
        // A free-text field: counted as present only.
        expect(arm.outcomes.slot).toEqual({ present: mine.length });
        const first = arm.version === 1 ? 'one' : 'two';
        expect(arm.states[first]).toEqual({ calls: mine.length, share: 1 });
        expect(arm.states.confirmed).toEqual({ calls: mine.length, share: 1 });
      } else {
        expect(arm.average_duration_secs).toBeNull();
      }
    }
    expect(result.body.results.reduce((sum: number, arm: { calls: number }) => sum + arm.calls, 0)).toBe(8);

    // The traffic on the graph, for one arm: the same calls, and the states only its version has.
    for (const arm of result.body.results) {
      const traffic = await server.request('GET', `/v1/analytics/flows/${flowId}?experiment=${experimentId}&arm=${arm.version}`, { apiKey: account.apiKey });
      expect(traffic.status, traffic.text).toBe(200);
      expect(traffic.body.calls).toBe(arm.calls);
      expect(traffic.body.filter).toMatchObject({ experiment: experimentId, arm: arm.version });
      const other = arm.version === 1 ? 'two' : 'one';
      expect(traffic.body.states.some((s: { state: string }) => s.state === other)).toBe(false);
    }
    const armAlone = await server.request('GET', `/v1/analytics/flows/${flowId}?arm=1`, { apiKey: account.apiKey });
    expect(armAlone.status).toBe(422);
    expect(armAlone.body.error.details).toEqual([{ field: 'arm', message: 'give experiment too' }]);
  });
});
