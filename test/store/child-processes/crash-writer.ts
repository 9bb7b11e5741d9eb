// Child process of crash-kill.test.ts: opens the store in the given dir and writes until it is
// killed. A line goes to stdout only after the write's promise resolved, so every printed line
// names a write the store acknowledged as durable:
//   ready                   the store is open
//   flow <id>               a flow was created
//   debit <idempotency key> a one-cent debit was charged
// stdout is a pipe, and on Linux pipe writes are synchronous, so nothing printed is lost in a buffer.

import { openStore } from '../../../server/store/sqljs/store.ts';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: crash-writer.ts <data dir>');

// A low threshold so that kills also land during snapshot rotation.
const store = await openStore({ dataDir, snapshotEveryRecords: 40 });
const email = 'crash@example.com';
const account =
  await store.accounts.findByEmail(email) ??
  (await store.accounts.create({ email, passwordHash: 'h', signupCreditCents: 1_000_000_000 }));
process.stdout.write('ready\n');

const run = `${process.pid}`;
let counter = 0;

async function writeForever(worker: number): Promise<never> {
  for (;;) {
    const n = counter++;
    if (n % 5 === 0) {
      const key = `crash:${run}:${n}`;
      const result = await store.credits.debit(account.id, 1, { idempotencyKey: key });
      if (result.ok) process.stdout.write(`debit ${key}\n`);
    } else {
      const flow = await store.flows.create({ accountId: account.id, name: `w${worker}-${n}`, yamlContent: 'x'.repeat(n % 700) });
      process.stdout.write(`flow ${flow.id}\n`);
    }
  }
}

// Several writers at once, so kills also land while a group commit holds more than one record.
await Promise.all([0, 1, 2, 3].map(writeForever));
