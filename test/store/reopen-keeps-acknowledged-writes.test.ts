import { describe, expect, it } from 'vitest';
import { openStore } from '../../server/store/sqljs/store.ts';
import type { EmbeddedStore as Store } from '../../server/store/sqljs/store.ts';
import { closeAfterTest, copyAsIfCrashed, tempDataDir } from './helpers.ts';

async function writeOneOfEverything(store: Store) {
  const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'scrypt$x', signupCreditCents: 200 });
  const key = await store.apiKeys.create({ accountId: account.id, label: 'ci', prefix: 'vfk_abcdefgh', keyHash: 'hash-1' });
  const flow = await store.flows.create({ accountId: account.id, name: 'Guessing game', yamlContent: 'id: game\n' });
  const session = await store.sessions.create({
    accountId: account.id,
    flowId: flow.id,
    tokenHash: 'token-hash-1',
    tokenPrefix: 'abcdefghijkl',
    transport: 'websocket',
    mode: 'flow',
    context: { player: 'Ada' },
    metadata: { source: 'test' },
    expiresAt: store.db.now() + 600,
  });
  await store.credits.debit(account.id, 3, { idempotencyKey: `session:${session.id}:minute:1`, sessionId: session.id });
  await store.providers.update(account.id, { sttProvider: 'deepgram', sttKeyEnc: 'enc:1' });
  return { account, key, flow, session };
}

async function expectEverythingPresent(store: Store, written: Awaited<ReturnType<typeof writeOneOfEverything>>) {
  const { account, key, flow, session } = written;
  expect(await store.accounts.findById(account.id)).toEqual(account);
  expect(await store.apiKeys.findActiveByHash('hash-1')).toEqual(key);
  expect(await store.flows.get(account.id, flow.id)).toEqual(flow);
  expect(await store.sessions.findByTokenHash('token-hash-1')).toEqual(session);
  expect(await store.credits.balance(account.id)).toBe(197);
  expect(await store.providers.get(account.id)).toMatchObject({ sttProvider: 'deepgram', sttKeyEnc: 'enc:1' });
}

describe('reopening a data dir', () => {
  it('finds every write acknowledged before a clean close', async () => {
    const dataDir = await tempDataDir();
    const first = await openStore({ dataDir });
    const written = await writeOneOfEverything(first);
    await first.close();

    const second = closeAfterTest(await openStore({ dataDir }));
    await expectEverythingPresent(second, written);
    // A clean close leaves everything in the snapshot and nothing to replay.
    expect(second.db.recovery.replayedRecords).toBe(0);
  });

  it('finds every write acknowledged before a crash, by replaying the journal', async () => {
    const dataDir = await tempDataDir();
    const running = closeAfterTest(await openStore({ dataDir }));
    const written = await writeOneOfEverything(running);

    const afterCrash = closeAfterTest(await openStore({ dataDir: await copyAsIfCrashed(dataDir) }));
    await expectEverythingPresent(afterCrash, written);
    expect(afterCrash.db.recovery.replayedRecords).toBe(6);
  });

  it('keeps writes made after a previous recovery', async () => {
    const dataDir = await tempDataDir();
    const running = closeAfterTest(await openStore({ dataDir }));
    const written = await writeOneOfEverything(running);

    const recoveredDir = await copyAsIfCrashed(dataDir);
    const recovered = await openStore({ dataDir: recoveredDir });
    const later = await recovered.flows.create({ accountId: written.account.id, name: 'Later', yamlContent: 'id: later\n' });
    const afterSecondCrash = closeAfterTest(await openStore({ dataDir: await copyAsIfCrashed(recoveredDir) }));
    await recovered.close();

    await expectEverythingPresent(afterSecondCrash, written);
    expect(await afterSecondCrash.flows.get(written.account.id, later.id)).toEqual(later);
  });

  it('keeps nothing of a write whose callback threw, in memory or on disk', async () => {
    const dataDir = await tempDataDir();
    const store = closeAfterTest(await openStore({ dataDir }));
    const account = await store.accounts.create({ email: 'bo@example.com', passwordHash: 'h' });

    const failing = store.db.write((tx) => {
      tx.run('INSERT INTO flows (id, account_id, name, yaml_content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', [
        'half-done',
        account.id,
        'Half done',
        'id: x\n',
        1,
        1,
      ]);
      throw new Error('changed my mind');
    });
    await expect(failing).rejects.toThrow('changed my mind');
    expect(await store.flows.get(account.id, 'half-done')).toBeNull();

    const afterCrash = closeAfterTest(await openStore({ dataDir: await copyAsIfCrashed(dataDir) }));
    expect(await afterCrash.flows.get(account.id, 'half-done')).toBeNull();
    expect(await afterCrash.accounts.findById(account.id)).toEqual(account);
  });
});
