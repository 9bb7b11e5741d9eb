// The flow quota's check and the write it allows run as one turn per account on a server
// (server/api/flows/storage-quota.ts): two uploads whose checks both came before either write
// would otherwise both pass and overshoot the quota. The store answers from another thread (or
// over the network), so nothing but this queue keeps a second check from running between the
// first check and its write. Driven at the function the routes call, so the interleaving that
// overshot is certain, not a matter of two HTTP requests' timing.
import { describe, expect, it } from 'vitest';
import { withFlowStorageLeft } from '../../server/api/flows/storage-quota.ts';
import type { Services } from '../../server/http/services.ts';
import { openStore } from '../../server/store/sqljs/store.ts';
import { closeAfterTest, tempDataDir } from '../store/helpers.ts';

describe('the flow quota holds for writes sent at once', () => {
  it('of three flows created at once against a quota of one, exactly one is kept; other accounts do not wait', async () => {
    const store = closeAfterTest(await openStore({ dataDir: await tempDataDir() }));
    const services = { store, config: { limits: { flowsPerAccount: 1, flowStorageMb: 0 } } } as unknown as Pick<Services, 'config' | 'store'>;
    const account = await store.accounts.create({ email: 'quota@example.com', passwordHash: 'scrypt$x', signupCreditCents: 0 });
    const other = await store.accounts.create({ email: 'other@example.com', passwordHash: 'scrypt$x', signupCreditCents: 0 });
    const create = (accountId: string, name: string) =>
      withFlowStorageLeft(services, accountId, { flows: 1 }, () => store.flows.create({ accountId, name, yamlContent: `id: ${name}\n` }));

    const results = await Promise.allSettled([create(account.id, 'a'), create(account.id, 'b'), create(other.id, 'c'), create(account.id, 'd')]);

    const mine = [results[0], results[1], results[3]];
    expect(mine.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const refused of mine.filter((r) => r.status === 'rejected')) {
      expect((refused as PromiseRejectedResult).reason).toMatchObject({ code: 'flow_quota_exceeded' });
    }
    expect(results[2]!.status).toBe('fulfilled');
    expect(await store.flows.list(account.id)).toHaveLength(1);
    // A refused turn does not hold up the next: room made, the next create is kept.
    await store.flows.delete(account.id, (await store.flows.list(account.id))[0]!.id);
    await expect(create(account.id, 'e')).resolves.toMatchObject({ name: 'e' });
  });
});
