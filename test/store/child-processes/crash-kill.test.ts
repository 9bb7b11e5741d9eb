import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { SNAPSHOT_FILE } from '../../../server/store/sqljs/database.ts';
import { openStore } from '../../../server/store/sqljs/store.ts';
import { bundleScript } from '../../support/script-bundle.ts';
import { integrityOfFile, tempDataDir } from '../helpers.ts';

// The bench raises this for a longer crash loop, e.g. VOXFLOW_CRASH_ROUNDS=1000.
const ROUNDS = Number(process.env.VOXFLOW_CRASH_ROUNDS ?? 5);
const WRITER_SOURCE = fileURLToPath(new URL('./crash-writer.ts', import.meta.url));
const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The writer bundled once (script-bundle.ts): each round's process runs it without tsx. */
let writer = '';
beforeAll(async () => {
  writer = await bundleScript(WRITER_SOURCE);
});

interface Acknowledged {
  flows: string[];
  debits: string[];
}

/** Starts the writer, kills it with SIGKILL 0–350 ms after its first acknowledged write, returns what it acknowledged. */
async function runAndKill(dataDir: string): Promise<Acknowledged> {
  const child = spawn(process.execPath, [writer, dataDir], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  // Counted from the first acknowledged write, not from a clock: on a loaded machine the writer
  // may not write at all in the first few hundred ms, and a kill then would prove nothing.
  const writing = await Promise.race([
    new Promise<boolean>((resolve) => {
      const check = () => /^flow /m.test(stdout) && resolve(true);
      child.stdout.on('data', check);
    }),
    exited.then(() => false),
  ]);
  if (!writing) throw new Error(`crash writer exited before its first write:\n${stderr}`);

  await new Promise((resolve) => setTimeout(resolve, Math.random() * 350));
  child.kill('SIGKILL');
  // Wait until the child is reaped: until then its pid still answers, and its lock looks held.
  await exited;

  const lines = stdout.split('\n');
  lines.pop(); // a line cut off by the kill was never acknowledged in full
  return {
    flows: lines.filter((line) => line.startsWith('flow ')).map((line) => line.slice(5)),
    debits: lines.filter((line) => line.startsWith('debit ')).map((line) => line.slice(6)),
  };
}

describe('a writer killed with SIGKILL', () => {
  it(
    `loses no acknowledged write and leaves a sound database, over ${ROUNDS} kills`,
    async () => {
      const dataDir = await tempDataDir();
      const acknowledged: Acknowledged = { flows: [], debits: [] };

      for (let round = 0; round < ROUNDS; round++) {
        const { flows, debits } = await runAndKill(dataDir);
        acknowledged.flows.push(...flows);
        acknowledged.debits.push(...debits);

        const store = await openStore({ dataDir });
        try {
          const account = await store.accounts.findByEmail('crash@example.com');
          expect(account, `round ${round}`).not.toBeNull();
          const flowIds = new Set((await store.flows.list(account!.id)).map((flow) => flow.id));
          expect(acknowledged.flows.filter((id) => !flowIds.has(id)), `round ${round}: lost flows`).toEqual([]);
          const debitKeys = new Set(
            store.db.all<{ key: string }>('SELECT idempotency_key AS key FROM credit_ledger').map((row) => row.key),
          );
          expect(acknowledged.debits.filter((key) => !debitKeys.has(key)), `round ${round}: lost debits`).toEqual([]);
          const debitRows = store.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM credit_ledger WHERE delta_cents = -1')!.n;
          expect(await store.credits.balance(account!.id), `round ${round}: ledger sum`).toBe(1_000_000_000 - debitRows);
          expect(store.db.all('PRAGMA integrity_check'), `round ${round}`).toEqual([{ integrity_check: 'ok' }]);
        } finally {
          await store.close();
        }
        expect(await integrityOfFile(await readFile(join(dataDir, SNAPSHOT_FILE)))).toEqual(['ok']);
      }

      // The loop proves something only if the writer got writes acknowledged before the kills.
      expect(acknowledged.flows.length).toBeGreaterThan(ROUNDS);
    },
    // A hang guard: each round starts a process that opens the store, which took over 8 s a round
    // (through tsx then) beside a second full test run (load 15–20); a hang still stops it.
    20_000 + ROUNDS * 20_000,
  );
});
