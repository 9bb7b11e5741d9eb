// What a client is shown survives a crash: the server's store (served from a worker thread)
// answers a read only once every write it could have seen is on disk. Before, a read of another
// request's write was answered while that write's fsync was still in flight, and a SIGKILL in
// that window took back what the client had been shown (a webhook delivery's attempt log, seen
// in a loaded run of webhook-delivery-survives-sigkill).
import { describe, expect, it } from 'vitest';
import { openStore } from '../../server/store/sqljs/store.ts';
import { openWorkerStore } from '../../server/store/sqljs/worker-store.ts';
import { closeAfterTest, tempDataDir } from './helpers.ts';

const PASSWORD_HASH = 'scrypt$not-a-real-hash';

describe('reads are answered once what they saw is durable', () => {
  it('a read of a write still being made durable is answered after that write, not before', async () => {
    const store = closeAfterTest(await openWorkerStore({ dataDir: await tempDataDir() }));
    for (let round = 0; round < 5; round++) {
      const email = `reader-${round}@example.com`;
      const answered: string[] = [];
      // Sent back to back: the read reaches the worker while the write's fsync is in flight.
      const write = store.accounts.create({ email, passwordHash: PASSWORD_HASH, signupCreditCents: 0 }).then((account) => {
        answered.push('write');
        return account;
      });
      const read = store.accounts.findByEmail(email).then((account) => {
        answered.push('read');
        return account;
      });
      const [created, seen] = await Promise.all([write, read]);
      expect(seen?.id).toBe(created.id);
      expect(answered).toEqual(['write', 'read']);
    }
  });

  it('durable() resolves once every write committed before it is on disk', async () => {
    const store = closeAfterTest(await openStore({ dataDir: await tempDataDir() }));
    const writes = Array.from({ length: 20 }, (_, i) =>
      store.accounts.create({ email: `w${i}@example.com`, passwordHash: PASSWORD_HASH, signupCreditCents: 0 }),
    );
    const committed = store.db.stats().lastSeq;
    expect(store.db.stats().durableSeq).toBeLessThan(committed);
    await store.db.durable();
    expect(store.db.stats().durableSeq).toBeGreaterThanOrEqual(committed);
    await Promise.all(writes);
    // Nothing in flight: it answers at once.
    await store.db.durable();
  });
});
