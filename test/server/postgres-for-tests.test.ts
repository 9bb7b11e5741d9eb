// The PostgreSQL that the two-store tests run against: a real server started from
// Debian's binaries in a temp dir on a free port, reached with node-postgres, and gone after.
import { existsSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startPostgres, type TestPostgres } from '../support/postgres.ts';

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);
afterAll(async () => postgres?.stop());

it('starts on a free port, makes databases, commits durably, and stops without a trace', { timeout: 60_000 }, async () => {
  const url = await postgres.createDatabase('voxflow_harness');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ setting: string }>("SELECT current_setting('fsync') AS setting");
    expect(rows[0]!.setting).toBe('on');
    await client.query('CREATE TABLE t (id int PRIMARY KEY, note text NOT NULL)');
    await client.query('BEGIN');
    await client.query('INSERT INTO t VALUES ($1, $2)', [1, 'kept']);
    await client.query('COMMIT');
    // Another connection sees the committed row.
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    expect((await other.query('SELECT note FROM t WHERE id = 1')).rows).toEqual([{ note: 'kept' }]);
    await other.end();
  } finally {
    await client.end();
  }
  expect(existsSync(postgres.dir)).toBe(true);
  await postgres.stop();
  expect(existsSync(postgres.dir)).toBe(false);
  await expect(new pg.Client({ connectionString: url }).connect()).rejects.toThrow();
});
