// The embedded store served from a worker thread (server/store/sqljs/worker-store.ts,
// docs/benchmarks.md#what-the-figures-rest-on) answers as the store does in one thread: the same
// values, the same error classes with their fields, writes seen by the reads after them,
// acknowledged writes on disk; and a worker that dies makes the store unavailable rather than
// leaving calls hanging.
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { EmailTakenError, IdempotencyKeyReusedError, SessionCapReachedError, StoreClosedError, StoreError, StoreFailedError, StoreLockedError, type Store } from '../../server/store/store.ts';
import { StoreWorkerLostError, openWorkerStore } from '../../server/store/sqljs/worker-store.ts';
import { openStore } from '../../server/store/sqljs/store.ts';
import { JOURNAL_FILE } from '../../server/store/sqljs/database.ts';
import { closeAfterTest, tempDataDir } from './helpers.ts';

const PASSWORD_HASH = 'scrypt$not-a-real-hash';

/** One of everything a repository keeps, made through `store`; returns the ids to read it back. */
async function fillStore(store: Store) {
  const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: PASSWORD_HASH, signupCreditCents: 500 });
  const key = await store.apiKeys.create({ accountId: account.id, label: 'ci', prefix: 'vf_abc', keyHash: 'h'.repeat(64) });
  const flow = await store.flows.create({ accountId: account.id, name: 'Guessing', yamlContent: 'id: g\n# a comment é\n', version: { documentVersion: '1.0', createdBy: { kind: 'api_key', apiKeyId: key.id } } });
  await store.flowVersions.saveDraft(account.id, flow.id, 'id: g\nversion: 2\n');
  const [test] = await store.flowTests.create(account.id, flow.id, [{ name: 'first', yamlContent: 'name: first\n' }]);
  const run = await store.flowTests.startRun({ accountId: account.id, flowId: flow.id, mode: 'scripted', draft: true, flowVersion: null, testIds: [test!.id] });
  await store.flowTests.finishRun(run.id, { status: 'passed', resultJson: '{"ok":true}', error: null });
  const session = await store.sessions.createConnected({ accountId: account.id, flowId: flow.id, transport: 'websocket', mode: 'flow', context: { nested: { list: [1, 'two', null, true] } }, metadata: {}, flowVersion: 1 });
  await store.timelines.append(session.id, [{ seq: 1, at: 1_700_000_000.25, type: 'session_started', data: '{"type":"session_started"}' }], { events: 1, bytes: 26, dropped: 0 });
  await store.credits.debit(account.id, 3, { idempotencyKey: `session:${session.id}:minute:0`, sessionId: session.id, reason: 'session_minute' });
  await store.providers.update(account.id, { llmProvider: 'openai', llmModel: 'gpt-4o-mini' });
  await store.secrets.put(account.id, 'CRM_TOKEN', 'sealed-value');
  const hook = await store.webhooks.create({ id: 'wh_test1', accountId: account.id, url: 'https://example.com/hook', events: ['session.ended'], secretEnc: 'sealed' });
  await store.webhooks.enqueue([{ id: 'msg_1', webhookId: hook.id, accountId: account.id, sessionId: session.id, eventType: 'session.ended', payload: '{}', createdAt: 1_700_000_001 }]);
  await store.webhooks.recordAttempt('msg_1', { attempt: { at: 1_700_000_002, statusCode: 500, error: 'HTTP 500', durationMs: 12 }, status: 'pending', nextAttemptAt: 1_700_000_060 });
  return { account, flow, session, hook };
}

/** Every kind of answer the repositories give, read through `store`. */
async function readEverything(store: Store, ids: Awaited<ReturnType<typeof fillStore>>) {
  const { account, flow, session, hook } = ids;
  return {
    account: await store.accounts.findById(account.id),
    keys: await store.apiKeys.listByAccount(account.id),
    flow: await store.flows.get(account.id, flow.id),
    flows: await store.flows.list(account.id),
    versions: await store.flowVersions.list(account.id, flow.id),
    version: await store.flowVersions.get(account.id, flow.id, 1),
    draft: await store.flowVersions.getDraft(account.id, flow.id),
    storage: await store.flowStorage.usage(account.id),
    tests: await store.flowTests.list(account.id, flow.id),
    runs: await store.flowTests.listRuns(account.id, flow.id),
    session: await store.sessions.findById(session.id),
    recent: await store.sessions.listRecent(account.id),
    timeline: await store.timelines.page(session.id, 0, 10),
    balance: await store.credits.balance(account.id),
    providers: await store.providers.get(account.id),
    secrets: await store.secrets.list(account.id),
    sealed: await store.secrets.sealed(account.id),
    hooks: await store.webhooks.listByAccount(account.id),
    deliveries: await store.webhooks.listDeliveries(hook.id, 10),
    nextDue: await store.webhooks.nextDueAt(),
    absent: await store.flows.get(account.id, 'flow_absent'),
  };
}

describe('the embedded store in a worker thread', () => {
  it('answers writes of a long flow text with the flow as read back, its text the one sent', async () => {
    const store = closeAfterTest(await openWorkerStore({ dataDir: await tempDataDir() }));
    const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: PASSWORD_HASH, signupCreditCents: 500 });
    // Longer than the worker sends back when the call carried it (store-worker.ts), with non-ASCII text.
    const yaml = (n: number) => `id: long\n${Array.from({ length: 400 }, (_, i) => `# line ${i} of ${n}, é ✓\n`).join('')}`;
    const created = await store.flows.create({ accountId: account.id, name: 'Long', yamlContent: yaml(1) });
    expect(created).toStrictEqual(await store.flows.get(account.id, created.id));
    expect(Object.keys(created)).toEqual(Object.keys((await store.flows.get(account.id, created.id))!));
    expect(created.yamlContent).toBe(yaml(1));

    const edited = await store.flows.update(account.id, created.id, { yamlContent: yaml(2) });
    expect(edited).toStrictEqual(await store.flows.get(account.id, created.id));
    expect(edited!.yamlContent).toBe(yaml(2));
    expect(edited!.publishedVersion).toBe(2);
    // A write that does not carry the text answers with the stored one.
    const renamed = await store.flows.update(account.id, created.id, { name: 'Longer' });
    expect(renamed).toMatchObject({ name: 'Longer', yamlContent: yaml(2) });
  });

  it('answers every read with the values the store gives in one thread, and keeps them on disk', async () => {
    const dataDir = await tempDataDir();
    const worker = await openWorkerStore({ dataDir });
    const ids = await fillStore(worker);
    const throughWorker = await readEverything(worker, ids);
    await worker.close();

    const inProcess = closeAfterTest(await openStore({ dataDir }));
    // toStrictEqual compares prototypes too: a Date or class instance would not pass as a plain object.
    expect(throughWorker).toStrictEqual(await readEverything(inProcess, ids));
    expect(throughWorker.flow).toMatchObject({ name: 'Guessing', yamlContent: 'id: g\n# a comment é\n', publishedVersion: 1, hasDraft: true });
    expect(throughWorker.balance).toBe(497);
    // close() snapshotted: the journal was empty when the store was opened again.
    expect(inProcess.db.recovery.replayedRecords).toBe(0);
  });

  it('throws the store errors as their own classes, with their codes and fields', async () => {
    const store = closeAfterTest(await openWorkerStore({ dataDir: await tempDataDir(), sessionsPerAccount: 1 }));
    const account = await store.accounts.create({ email: 'grace@example.com', passwordHash: PASSWORD_HASH, signupCreditCents: 10 });

    const taken = await store.accounts.create({ email: 'GRACE@example.com', passwordHash: PASSWORD_HASH }).catch((error: unknown) => error);
    expect(taken).toBeInstanceOf(EmailTakenError);
    expect(taken).toBeInstanceOf(StoreError);
    expect(taken).toMatchObject({ code: 'email_taken', name: 'EmailTakenError', message: 'An account with this email already exists.' });

    await store.credits.grant(account.id, 5, 'gift', 'gift:1');
    const reused = await store.credits.debit(account.id, 2, { idempotencyKey: 'gift:1' }).catch((error: unknown) => error);
    expect(reused).toBeInstanceOf(IdempotencyKeyReusedError);
    expect(reused).toMatchObject({ code: 'idempotency_key_reused', idempotencyKey: 'gift:1' });

    const session = { accountId: account.id, flowId: null, transport: 'websocket', mode: 'assistant', context: {}, metadata: {} } as const;
    await store.sessions.createConnected(session);
    const capped = await store.sessions.createConnected(session).catch((error: unknown) => error);
    expect(capped).toBeInstanceOf(SessionCapReachedError);
    expect(capped).toMatchObject({ code: 'session_cap_reached', limit: 1 });

    const fractional = await store.sessions.end('ses_x', { endedAt: 1, reason: 'x', creditsChargedCents: 0.5 }).catch((error: unknown) => error);
    expect(fractional).toBeInstanceOf(RangeError);
    expect((fractional as Error).message).toBe('creditsChargedCents must be whole cents; got 0.5');
  });

  it('holds its data dir against a store opened in this thread, and against a second worker-served one', async () => {
    const dataDir = await tempDataDir();
    closeAfterTest(await openWorkerStore({ dataDir }));
    await expect(openStore({ dataDir })).rejects.toBeInstanceOf(StoreLockedError);
    await expect(openWorkerStore({ dataDir })).rejects.toMatchObject({ code: 'store_locked', pid: process.pid });
  });

  it('lets a read sent right after a write, before its answer, see that write', async () => {
    const store = closeAfterTest(await openWorkerStore({ dataDir: await tempDataDir() }));
    const account = await store.accounts.create({ email: 'lin@example.com', passwordHash: PASSWORD_HASH });
    const created = store.flows.create({ accountId: account.id, name: 'Sent first', yamlContent: 'id: a\n' });
    const listed = store.flows.list(account.id);
    expect((await listed).map((flow) => flow.name)).toEqual(['Sent first']);
    expect((await created).name).toBe('Sent first');
  });

  it('keeps a write sent just before close(), and refuses calls once closed', async () => {
    const dataDir = await tempDataDir();
    const store = await openWorkerStore({ dataDir });
    const created = store.accounts.create({ email: 'late@example.com', passwordHash: PASSWORD_HASH });
    const closed = store.close();
    const account = await created;
    await closed;
    await expect(store.accounts.findById(account.id)).rejects.toBeInstanceOf(StoreClosedError);

    const reopened = closeAfterTest(await openStore({ dataDir }));
    expect(await reopened.accounts.findByEmail('late@example.com')).toEqual(account);
  });

  it('says it refuses writes before the write that failed is answered (a full disk)', async () => {
    const dataDir = await tempDataDir();
    await symlink('/dev/full', join(dataDir, JOURNAL_FILE));
    const store = closeAfterTest(await openWorkerStore({ dataDir }));
    expect(store.writable()).toBe(true);
    const failed = await store.accounts.create({ email: 'full@example.com', passwordHash: PASSWORD_HASH }).then(
      () => null,
      (error: unknown) => ({ error, writable: store.writable() }),
    );
    expect(failed?.error).toBeInstanceOf(StoreFailedError);
    expect(failed?.error).toMatchObject({ code: 'store_failed' });
    expect((failed?.error as Error).cause).toMatchObject({ code: 'ENOSPC' });
    expect(failed?.writable).toBe(false);
  });

  it('fails every waiting and later call when its thread dies, says so once, and a store opened next works', async () => {
    const dataDir = await tempDataDir();
    const onWorkerLost = vi.fn();
    const store = await openWorkerStore({ dataDir, onWorkerLost });
    const account = await store.accounts.create({ email: 'kept@example.com', passwordHash: PASSWORD_HASH });

    const waiting = Array.from({ length: 200 }, () => store.accounts.findById(account.id).catch((error: unknown) => error));
    await store.worker.terminate();
    const outcomes = await Promise.all(waiting);
    // Each call was answered before the thread stopped, or failed as the store being unavailable;
    // none is left waiting, and the last ones sent cannot have been answered.
    for (const outcome of outcomes) if (!(outcome instanceof StoreWorkerLostError)) expect(outcome).toEqual(account);
    expect(outcomes.at(-1)).toBeInstanceOf(StoreWorkerLostError);
    const later = await store.flows.list(account.id).catch((error: unknown) => error);
    expect(later).toBeInstanceOf(StoreWorkerLostError);
    // The HTTP layer answers StoreFailedError with 503 store_unavailable.
    expect(later).toBeInstanceOf(StoreFailedError);
    expect(store.writable()).toBe(false);
    expect(onWorkerLost).toHaveBeenCalledTimes(1);
    await store.close();

    // The data dir was let go with the thread: the next store opens it, and the acknowledged write is there.
    const next = closeAfterTest(await openWorkerStore({ dataDir }));
    expect(await next.accounts.findById(account.id)).toEqual(account);
    expect(next.writable()).toBe(true);
  });
});
