// `npm run bench -- analytics`: GET /v1/analytics/flows/{id} over a flow with 100,000 stored
// sessions, on sql.js and on PostgreSQL (target: p95 ≤ 200 ms). The sessions are written straight
// into the store's tables with set-based SQL (each a call of 2 to 5 moves, ended for one of four
// reasons, on one of three versions, over 29 days; half of them analysed), not made through
// calls: that would take hours; then counted into the pre-counted days (rows/traffic-tally.ts)
// with the statement that counts every ended session, as the migration that made them did (a
// session ended through the store is counted as it ends). sql.js: through the embedded store's own write path (journal and
// snapshot) on the data folder the server then opens; PostgreSQL: through `pg` into the database
// the server runs on. The requests go one at a time over HTTP from this process, with an API key:
// the whole range, a 7-day range, and a 7-day range narrowed by success (the analyses joined).
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openStore } from '../../server/store/sqljs/store.ts';
import { tallyAllSql } from '../../server/store/rows/traffic-tally.ts';
import { startPostgres } from '../support/postgres.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { ms, percentile, timeRuns, type BenchRow } from './bench-kit.ts';

const SESSIONS = 100_000;
const RUNS = 40;
const TARGET = 'p95 ≤ 200 ms';
const load1 = () => `load average ${loadavg().map((n) => n.toFixed(1)).join(' / ')} (1 / 5 / 15 min) on ${availableParallelism()} cores`;

/**
 * The set-based inserts, in either dialect: `n(i)` numbers the sessions 0 … SESSIONS-1 and `k(k)`
 * a session's moves 1 … 5 (session i makes 2 + i % 4 of them). Moves of one call reach distinct
 * states ((i + 3k) % 20 for k ≥ 2), so each is a first visit and a first take.
 */
function bulkSql(accountId: string, flowId: string, now: number, dialect: 'sqlite' | 'pg'): string[] {
  const numbers = (name: string, column: string, last: number) =>
    dialect === 'pg' ? `(SELECT generate_series(0, ${last}) AS ${column}) ${name}` : `(WITH RECURSIVE g(${column}) AS (SELECT 0 UNION ALL SELECT ${column} + 1 FROM g WHERE ${column} < ${last}) SELECT ${column} FROM g) ${name}`;
  const mod = (a: string, b: number) => (dialect === 'pg' ? `mod(${a}, ${b})` : `(${a}) % ${b}`);
  const text = (a: string) => (dialect === 'pg' ? `(${a})::text` : `CAST(${a} AS TEXT)`);
  const state = (k: string) => `CASE WHEN ${k} = 1 THEN 'greet' ELSE 'state_' || ${text(mod(`n.i + 3 * ${k}`, 20))} END`;
  const moves = `2 + ${mod('n.i', 4)}`;
  const id = `'bench_' || ${text('n.i')}`;
  const created = `${now} - n.i * 25`;
  return [
    `INSERT INTO sessions (id, account_id, flow_id, transport, mode, context_json, metadata_json, status, created_at, expires_at, started_at, ended_at,
                           duration_secs, end_reason, flow_version, flow_draft, last_state)
     SELECT ${id}, '${accountId}', '${flowId}', 'twilio', 'flow', '{}', '{}', 'ended', ${created}, ${created}, ${created}, ${created} + 60 + ${mod('n.i', 300)},
            60 + ${mod('n.i', 300)},
            CASE ${mod('n.i', 4)} WHEN 0 THEN 'caller_hung_up' WHEN 1 THEN 'flow_ended' WHEN 2 THEN 'transferred' ELSE 'error' END,
            1 + ${mod('n.i', 3)}, 0, ${state(moves)}
     FROM ${numbers('n', 'i', SESSIONS - 1)}`,
    `INSERT INTO session_transitions (session_id, seq, at, from_state, to_state, tool, first_visit, first_take)
     SELECT ${id}, k.k, ${created} + k.k, CASE WHEN k.k = 1 THEN NULL ELSE ${state('k.k - 1')} END, ${state('k.k')},
            CASE WHEN k.k = 1 THEN NULL ELSE 'tool_' || ${text(mod('n.i + 3 * k.k', 20))} END, 1, 1
     FROM ${numbers('n', 'i', SESSIONS - 1)} JOIN ${numbers('k', 'k', 5)} ON k.k BETWEEN 1 AND ${moves}`,
    `INSERT INTO session_analyses (session_id, account_id, state, success, result, created_at, done_at)
     SELECT ${id}, '${accountId}', 'done', CASE ${mod('n.i', 3)} WHEN 0 THEN 'true' WHEN 1 THEN 'false' ELSE 'unknown' END,
            '{"outcome":{"values":{"booked":' || CASE WHEN ${mod('n.i', 3)} = 0 THEN 'true' ELSE 'false' END || '},"fields":{},"errors":[]},"success":null}', ${created}, ${created}
     FROM ${numbers('n', 'i', SESSIONS - 1)} WHERE ${mod('n.i', 2)} = 0`,
  ];
}

async function measure(label: string, server: TestServer, apiKey: string, flowId: string, rows: BenchRow[], filled: string): Promise<void> {
  const now = Date.now() / 1000;
  const week = new Date((now - 7 * 86_400) * 1000).toISOString();
  const queries: Array<[string, string]> = [
    ['all 100,000 calls', ''],
    ['the last 7 days', `?from=${week}`],
    ['the last 7 days, succeeded', `?from=${week}&success=true`],
  ];
  const first = await server.request('GET', `/v1/analytics/flows/${flowId}`, { apiKey });
  if (first.status !== 200 || first.body.calls !== SESSIONS) throw new Error(`${label}: the traffic counted ${first.body?.calls} calls, not ${SESSIONS}: ${first.text.slice(0, 300)}`);
  for (const [what, query] of queries) {
    const times = await timeRuns(RUNS, async () => {
      const response = await server.request('GET', `/v1/analytics/flows/${flowId}${query}`, { apiKey });
      if (response.status !== 200) throw new Error(`${label}: ${response.status} ${response.text}`);
    });
    rows.push({
      name: `${label}: GET /v1/analytics/flows/{id}, ${what}`,
      value: `${ms(percentile(times, 50))} p50, ${ms(percentile(times, 95))} p95`,
      target: TARGET,
      how: `${RUNS} sequential requests after 3 untimed, from this process over HTTP with an API key; ${SESSIONS} sessions, 350,000 moves, ${filled}; ${load1()}`,
    });
  }
}

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];

  // sql.js: the account and flow made through the API, the sessions written by the store itself
  // on the same data folder, then the server opened on it again.
  const dataDir = await mkdtemp(join(tmpdir(), 'voxflow-bench-analytics-'));
  try {
    const keys = { secretKey: randomBytes(32).toString('base64'), jwtSecret: randomBytes(48).toString('base64') };
    let server = await startTestServer({ dataDir, ...keys });
    const account = await createAccount(server);
    const flowId = await createFlow(server, account.apiKey, 'Bench traffic');
    const accountId = (await server.app.services.store.accounts.findByEmail(account.email))!.id;
    await server.close();
    const started = performance.now();
    const store = await openStore({ dataDir, fsync: false });
    await store.db.write((tx) => {
      for (const sql of bulkSql(accountId, flowId, Date.now() / 1000, 'sqlite')) tx.run(sql);
      for (const sql of tallyAllSql('sqlite')) tx.run(sql);
    });
    await store.close();
    const filled = `written in ${((performance.now() - started) / 1000).toFixed(1)} s`;
    server = await startTestServer({ dataDir, ...keys });
    try {
      await measure('sql.js', server, account.apiKey, flowId, rows, filled);
    } finally {
      await server.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }

  const cluster = await startPostgres();
  try {
    const databaseUrl = await cluster.createDatabase('voxflow_bench_analytics');
    const server = await startTestServer({ databaseUrl, secretKey: randomBytes(32).toString('base64'), jwtSecret: randomBytes(48).toString('base64') });
    try {
      const account = await createAccount(server);
      const flowId = await createFlow(server, account.apiKey, 'Bench traffic');
      const accountId = (await server.app.services.store.accounts.findByEmail(account.email))!.id;
      const started = performance.now();
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        for (const sql of bulkSql(accountId, flowId, Date.now() / 1000, 'pg')) await client.query(sql);
        for (const sql of tallyAllSql('pg')) await client.query(sql);
        await client.query('ANALYZE');
      } finally {
        await client.end();
      }
      await measure('PostgreSQL', server, account.apiKey, flowId, rows, `written in ${((performance.now() - started) / 1000).toFixed(1)} s, then ANALYZE`);
    } finally {
      await server.close();
    }
  } finally {
    await cluster.stop();
  }
  return rows;
}
