// What a session start reads (sessions.startReads: one statement on PostgreSQL), against both
// stores (both-stores.ts): it answers as the four reads it stands for would, in every state a
// start meets (no flow named, a missing flow, settings saved or not, an experiment running,
// stopped, or another flow's).
import { expect, it } from 'vitest';
import type { Store } from '../../../server/store/store.ts';
import { describeEachStore } from './both-stores.ts';

describeEachStore("a session start's reads", (open) => {
  /** The four reads one at a time, as POST /v1/sessions made them before. */
  const apart = async (store: Store, accountId: string, flowId: string | null) => ({
    flowFound: flowId === null ? true : await store.flows.exists(accountId, flowId),
    balance: await store.credits.balance(accountId),
    providers: await store.providers.get(accountId),
    experiment: flowId === null ? null : await store.experiments.running(accountId, flowId),
  });

  it('answer as the flow, balance, settings and experiment reads would, in every state a start meets', async () => {
    const { store } = await open();
    const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h', signupCreditCents: 200 });
    const other = await store.accounts.create({ email: 'bob@example.com', passwordHash: 'h', signupCreditCents: 0 });
    const flow = await store.flows.create({ accountId: account.id, name: 'Game', yamlContent: 'id: game\n' });
    const second = await store.flows.create({ accountId: account.id, name: 'Other', yamlContent: 'id: other\n' });
    const check = async (accountId: string, flowId: string | null) => {
      const together = await store.sessions.startReads(accountId, flowId);
      expect(together).toEqual(await apart(store, accountId, flowId));
      return together;
    };

    // Nothing saved yet: no settings, no experiment; no flow named; a missing flow; another account's flow.
    expect(await check(account.id, flow.id)).toMatchObject({ flowFound: true, balance: 200, experiment: null, providers: { accountId: account.id, llmModel: null } });
    expect(await check(account.id, null)).toMatchObject({ flowFound: true, balance: 200, experiment: null });
    expect(await check(account.id, 'no-such-flow')).toMatchObject({ flowFound: false, experiment: null });
    expect(await check(other.id, flow.id)).toMatchObject({ flowFound: false, balance: 0, experiment: null });

    // Settings saved, credit spent, an experiment running on the flow (and not on the other one).
    await store.providers.update(account.id, { llmProvider: 'openai', llmModel: 'model-a', sttBaseUrl: 'http://127.0.0.1:9/v1' });
    await store.credits.debit(account.id, 3, { idempotencyKey: 'minute-1' });
    const started = await store.experiments.create({ accountId: account.id, flowId: flow.id, name: 'A/B', arms: [{ version: 1, weight: 3 }, { version: 1, weight: 1 }] });
    if (started === 'running') throw new Error('no experiment was running');
    const running = await check(account.id, flow.id);
    expect(running).toMatchObject({ flowFound: true, balance: 197, providers: { llmProvider: 'openai', llmModel: 'model-a' }, experiment: { id: started.id, stoppedAt: null } });
    expect(running.experiment!.arms).toEqual([{ version: 1, weight: 3 }, { version: 1, weight: 1 }]);
    expect(await check(account.id, second.id)).toMatchObject({ flowFound: true, experiment: null });
    expect(await check(account.id, null)).toMatchObject({ experiment: null, providers: { llmModel: 'model-a' } });
    expect((await check(other.id, flow.id)).providers.llmModel).toBeNull();

    // Stopped, the experiment is no longer read.
    await store.experiments.stop(account.id, flow.id, started.id, 1);
    expect(await check(account.id, flow.id)).toMatchObject({ experiment: null });
  });
});
