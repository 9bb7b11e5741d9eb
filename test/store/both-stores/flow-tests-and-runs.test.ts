// Flow tests and their runs in the store (docs/testing.md#flow-tests), against both stores
// (both-stores.ts): tests list in the order they were made, even within one clock
// tick; a run is written when it starts and completed when it ends; a flow keeps only its latest
// FLOW_TEST_RUNS_KEPT runs; listing runs leaves their reports out; another account sees nothing.
import { expect, it } from 'vitest';
import { FLOW_TEST_RUNS_KEPT } from '../../../server/store/repositories/flow-tests.ts';
import { describeEachStore } from './both-stores.ts';

describeEachStore('flow tests and their runs', (open) => {
  async function storeWithFlow() {
    const clock = { now: 1_700_000_000 };
    const { store } = await open({ now: () => clock.now });
    const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    const flow = await store.flows.create({ accountId: account.id, name: 'F', yamlContent: 'id: f\n' });
    return { store, clock, account, flow };
  }

  it('stores a suite in its order, updates and removes one test, and shows another account none of it', async () => {
    const { store, clock, account, flow } = await storeWithFlow();
    const made = await store.flowTests.create(account.id, flow.id, ['zeta', 'alpha', 'mid'].map((name) => ({ name, yamlContent: `name: ${name}\nsteps: []\n` })));
    expect((await store.flowTests.list(account.id, flow.id)).map((t) => t.name)).toEqual(['zeta', 'alpha', 'mid']);
    expect(await store.flowTests.count(account.id, flow.id)).toBe(3);
    expect(await store.flowTests.get(account.id, flow.id, made[1]!.id)).toEqual(made[1]);

    clock.now += 30;
    const updated = await store.flowTests.update(account.id, flow.id, made[1]!.id, { name: 'alpha 2', yamlContent: 'name: alpha 2\nsteps: []\n' });
    expect(updated).toEqual({ ...made[1], name: 'alpha 2', yamlContent: 'name: alpha 2\nsteps: []\n', updatedAt: clock.now });
    expect(await store.flowTests.update(account.id, flow.id, 'nope', { name: 'x', yamlContent: 'x' })).toBeNull();
    expect(await store.flowTests.remove(account.id, flow.id, made[0]!.id)).toBe(true);
    expect(await store.flowTests.remove(account.id, flow.id, made[0]!.id)).toBe(false);
    expect((await store.flowTests.list(account.id, flow.id)).map((t) => t.name)).toEqual(['alpha 2', 'mid']);

    const other = await store.accounts.create({ email: 'bo@example.com', passwordHash: 'h' });
    expect(await store.flowTests.list(other.id, flow.id)).toEqual([]);
    expect(await store.flowTests.count(other.id, flow.id)).toBe(0);
    expect(await store.flowTests.get(other.id, flow.id, made[1]!.id)).toBeNull();
    expect(await store.flowTests.update(other.id, flow.id, made[1]!.id, { name: 'stolen', yamlContent: 'x' })).toBeNull();
    expect(await store.flowTests.remove(other.id, flow.id, made[1]!.id)).toBe(false);
    expect(await store.flowTests.count(account.id, flow.id)).toBe(2);
  });

  it('writes a run when it starts, completes it with its report, and lists runs newest first without reports', async () => {
    const { store, clock, account, flow } = await storeWithFlow();
    const draftRun = await store.flowTests.startRun({ accountId: account.id, flowId: flow.id, mode: 'scripted', draft: true, flowVersion: null, testIds: ['t1', 't2'] });
    expect(draftRun).toMatchObject({ status: 'running', draft: true, flowVersion: null, testIds: ['t1', 't2'], resultJson: null, finishedAt: null, createdAt: clock.now });
    expect(await store.flowTests.getRun(account.id, flow.id, draftRun.id)).toEqual(draftRun);
    const liveRun = await store.flowTests.startRun({ accountId: account.id, flowId: flow.id, mode: 'model', draft: false, flowVersion: 1, testIds: [] });
    clock.now += 5;
    await store.flowTests.finishRun(draftRun.id, { status: 'failed', resultJson: '{"passed":1,"failed":1}', error: null });
    await store.flowTests.finishRun(liveRun.id, { status: 'error', resultJson: null, error: 'the model did not answer' });

    expect(await store.flowTests.getRun(account.id, flow.id, draftRun.id)).toEqual({ ...draftRun, status: 'failed', resultJson: '{"passed":1,"failed":1}', finishedAt: clock.now });
    const listed = await store.flowTests.listRuns(account.id, flow.id);
    // Both started in one clock tick: the later start is listed first.
    expect(listed.map((run) => [run.id, run.status, run.draft, run.flowVersion, run.error])).toEqual([
      [liveRun.id, 'error', false, 1, 'the model did not answer'],
      [draftRun.id, 'failed', true, null, null],
    ]);
    expect(listed.every((run) => !('resultJson' in run))).toBe(true);
    const other = await store.accounts.create({ email: 'bo@example.com', passwordHash: 'h' });
    expect(await store.flowTests.getRun(other.id, flow.id, draftRun.id)).toBeNull();
    expect(await store.flowTests.listRuns(other.id, flow.id)).toEqual([]);
  });

  it(`keeps a flow's latest ${FLOW_TEST_RUNS_KEPT} runs and forgets older ones as new ones start`, async () => {
    const { store, account, flow } = await storeWithFlow();
    const other = await store.flows.create({ accountId: account.id, name: 'G', yamlContent: 'id: g\n' });
    const otherRun = await store.flowTests.startRun({ accountId: account.id, flowId: other.id, mode: 'scripted', draft: false, flowVersion: 1, testIds: [] });
    const ids: string[] = [];
    // All in one clock tick: which ones are "latest" is the order they started in.
    for (let i = 0; i < FLOW_TEST_RUNS_KEPT + 3; i++) {
      ids.push((await store.flowTests.startRun({ accountId: account.id, flowId: flow.id, mode: 'scripted', draft: false, flowVersion: 1, testIds: [] })).id);
    }
    expect((await store.flowTests.listRuns(account.id, flow.id)).map((run) => run.id)).toEqual(ids.slice(3).reverse());
    expect(await store.flowTests.getRun(account.id, flow.id, ids[0]!)).toBeNull();
    // Another flow's runs are not counted against this one.
    expect((await store.flowTests.listRuns(account.id, other.id)).map((run) => run.id)).toEqual([otherRun.id]);
  });
});
