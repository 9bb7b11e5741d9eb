// The hosted API on both stores side by side, all in one run on this machine:
// - GET /v1/flows with an API key ÷ a bare Fastify route returning the same JSON, per store;
// - the disk's own fsync floor (a 256 B append + fdatasync, looped, on the filesystem that holds
//   the store's files) and POST /v1/sessions as a ratio to it: one writer's p50 and eight
//   writers' p95, per store;
// - the CPU time a GET /v1/flows costs this process (the server) and PostgreSQL's processes, which
//   a loaded machine stretches far less than it does req/s;
// - on PostgreSQL, what each request leaves inside the database: pg_stat_statements (the
//   cluster preloads it) per statement, and pg_stat_wal's WAL flushes per session start;
// - durable POST /v1/sessions and POST /v1/flows, one writer and eight at once (eight accounts:
//   one account may have only two flow documents in the parser at once), p50/p95, each with its
//   store's floor measured in the same run: for sql.js the fdatasync of a small append in its data
//   folder (as writes.bench.ts), for PostgreSQL its own commit, an INSERT of one small row in
//   autocommit through `pg` on the cluster the bench starts (fsync and synchronous_commit on);
// - two nodes against one: the same POST /v1/sessions load, eight writers, sent to one server
//   process, then spread over two server processes on one database.
// Servers under test run in this process (the two-node rows: in processes of their own, as
// `voxflow --serve`); the clients always run in child processes (load-generator.ts,
// write-clients.ts). The write targets are printed on both stores' rows; on PostgreSQL
// they are read against its commit floor, which on this machine is above the disk's fsync floor.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { startPostgres, type TestPostgres } from '../support/postgres.ts';
import { GUESSING_GAME_YAML, createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { spawnServer, type ServerProcess } from '../support/spawn-server.ts';
import { listAndItsFloor, load } from './api.bench.ts';
import { ms, percentile, type BenchRow } from './bench-kit.ts';
import { processTicks } from './thread-cpu.ts';
import { fsyncFloor, timed } from './writes.bench.ts';

const run$ = promisify(execFile);
const SECONDS = Number(process.env.VOXFLOW_BENCH_SECONDS ?? 5);
const UNLIMITED = { rateLimit: { authPerMinute: 1e6, credentialPerMinute: 1e9, ipPerMinute: 1e9 } };
/** No answer parsed against its schema, as production runs (the tests check them). */
const AS_PRODUCTION = { checkResponses: false };
const CLIENT = 'from a child process over keep-alive HTTP with an API key, after 20 untimed';
const SESSION_TARGET_ONE = 'p50 ≤ 2 ms, p95 ≤ 5 ms';
const SESSION_TARGET_EIGHT = 'p95 ≤ 10 ms';
const DISK_TARGET_ONE = 'p50 ≤ 5× the disk floor';
const DISK_TARGET_EIGHT = 'p95 ≤ 15× the disk floor';

const load1 = () => `load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`;

/** PostgreSQL's own commit: one small row INSERTed in autocommit, one at a time, over one connection. */
async function commitFloor(url: string, count: number): Promise<number[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const times: number[] = [];
  try {
    await client.query('CREATE TABLE bench_floor (id BIGSERIAL PRIMARY KEY, note TEXT NOT NULL)');
    const note = 'x'.repeat(200);
    for (let i = 0; i < 20; i++) await client.query('INSERT INTO bench_floor (note) VALUES ($1)', [note]);
    for (let i = 0; i < count; i++) {
      const t = performance.now();
      await client.query('INSERT INTO bench_floor (note) VALUES ($1)', [note]);
      times.push(performance.now() - t);
    }
    await client.query('DROP TABLE bench_floor');
  } finally {
    await client.end();
  }
  return times.sort((a, b) => a - b);
}

interface StoreUnderTest {
  label: 'sql.js' | 'PostgreSQL';
  start(): Promise<TestServer>;
  /** The store's floor, p50/p95, measured now. */
  floor(server: TestServer): Promise<{ times: number[]; name: string; how: string }>;
  /** The disk's fsync floor on the filesystem that holds the store's files, sorted ms. */
  diskFloor(server: TestServer): Promise<number[]>;
  /** CPU ticks (1/100 s) of the store's own processes so far (PostgreSQL's: the cluster's), if it has any. */
  processTicks?: () => number;
  /** What the database itself did, between reset() and read() (PostgreSQL only). */
  inside?: { reset(): Promise<void>; read(what: string, requests: number): Promise<BenchRow[]> };
}

async function measureStore(store: StoreUnderTest, rows: BenchRow[]): Promise<void> {
  const server = await store.start();
  try {
    const { account, floor: bareFloor } = await listAndItsFloor(server, async (bareUrl) => {
      const before = process.cpuUsage();
      const loaded = await load(`${bareUrl}/bare`);
      return { loaded, cpu: process.cpuUsage(before) };
    });
    const { loaded: baseline, cpu: bareCpu } = bareFloor;
    await store.inside?.reset();
    const cpuBefore = process.cpuUsage();
    const ticksBefore = store.processTicks?.();
    const ours = await load(`${server.url}/v1/flows`, { 'x-service-key': account.apiKey });
    const cpu = process.cpuUsage(cpuBefore);
    const ticks = ticksBefore === undefined ? undefined : store.processTicks!() - ticksBefore;
    if (ours.non2xx > 0 || ours.errors > 0) throw new Error(`GET /v1/flows on ${store.label} failed under load: ${JSON.stringify(ours)}`);
    const served = ours.rps * SECONDS;
    rows.push({
      name: `${store.label}: GET /v1/flows with API key, CPU time per request`,
      value: `server process ${((cpu.user + cpu.system) / served).toFixed(0)} µs${ticks === undefined ? '' : `; PostgreSQL's processes ${((ticks * 10_000) / served).toFixed(0)} µs`} (bare Fastify's process ${((bareCpu.user + bareCpu.system) / (baseline.rps * SECONDS)).toFixed(0)} µs)`,
      how: `over the load of the row below: process.cpuUsage of this process (the server and its threads), /proc ticks of the cluster's processes; CPU time, which other work on the machine stretches far less than req/s; ${load1()}`,
    });
    rows.push(...((await store.inside?.read('GET /v1/flows', Math.round(ours.rps * SECONDS))) ?? []));
    rows.push({
      name: `${store.label}: GET /v1/flows with API key ÷ bare Fastify, same JSON`,
      value: `${(ours.rps / baseline.rps).toFixed(2)} (${Math.round(ours.rps)} vs ${Math.round(baseline.rps)} req/s)`,
      target: '≥ 0.5',
      how: `autocannon in a child process, 10 connections, ${SECONDS} s each, 5 flows listed; ${load1()}`,
    });

    const floor = await store.floor(server);
    const floorP50 = percentile(floor.times, 50);
    rows.push({ name: `${store.label}: ${floor.name}`, value: `${ms(floorP50)} p50, ${ms(percentile(floor.times, 95))} p95`, how: `${floor.how}; ${load1()}` });
    const row = (name: string, times: number[], target: string, how: string) =>
      rows.push({
        name: `${store.label}: ${name}`,
        value: `${ms(percentile(times, 50))} p50, ${ms(percentile(times, 95))} p95; p50 ${(percentile(times, 50) / floorP50).toFixed(1)}× the floor`,
        target,
        how: `${how}; ${load1()}`,
      });

    const disk = await store.diskFloor(server);
    const diskP50 = percentile(disk, 50);
    rows.push({
      name: `${store.label}: disk fsync floor (append 256 B + fdatasync)`,
      value: `${ms(diskP50)} p50, ${ms(percentile(disk, 95))} p95`,
      how: `300 appends to a file beside the store's files, one at a time; ${load1()}`,
    });
    const toDisk = (name: string, times: number[], p: 50 | 95, target: string) =>
      rows.push({
        name: `${store.label}: ${name} p${p} ÷ disk fsync floor p50`,
        value: `${(percentile(times, p) / diskP50).toFixed(1)}× (${ms(percentile(times, p))} ÷ ${ms(diskP50)})`,
        target,
        how: `the rows above, same run; ${load1()} (a loaded machine inflates the request more than the fsync)`,
      });

    const { apiKey } = account;
    const flowId = await createFlow(server, apiKey);
    const session = { flow_id: flowId };
    const flow = { name: 'Flow {i}', yaml_content: GUESSING_GAME_YAML };
    await store.inside?.reset();
    const one = await timed(server, '/v1/sessions', apiKey, session, 200, 1);
    rows.push(...((await store.inside?.read('POST /v1/sessions, one writer', 220)) ?? []));
    row('POST /v1/sessions, one writer', one, SESSION_TARGET_ONE, `200 sequential session starts ${CLIENT}`);
    const eight = await timed(server, '/v1/sessions', apiKey, session, 200, 8);
    row('POST /v1/sessions, eight writers at once', eight, SESSION_TARGET_EIGHT, `25 rounds of 8 concurrent session starts ${CLIENT}`);
    toDisk('POST /v1/sessions, one writer,', one, 50, DISK_TARGET_ONE);
    toDisk('POST /v1/sessions, eight writers,', eight, 95, DISK_TARGET_EIGHT);
    row('POST /v1/flows, one writer', await timed(server, '/v1/flows', apiKey, flow, 100, 1), '', `100 sequential creates of the guessing game ${CLIENT}`);
    const tenants = [apiKey, ...(await Promise.all(Array.from({ length: 7 }, async () => (await createAccount(server)).apiKey)))];
    row('POST /v1/flows, eight writers at once', await timed(server, '/v1/flows', tenants.join(','), flow, 160, 8), '', `20 rounds of 8 concurrent creates, one per account, ${CLIENT}`);
  } finally {
    await server.close();
  }
}

/** POST against a spawned node with JSON in and out. */
async function call(url: string, path: string, body: unknown, auth: Record<string, string> = {}): Promise<any> {
  const json: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
  const response = await fetch(url + path, { method: 'POST', headers: { ...json, ...auth }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${text}`);
  return JSON.parse(text);
}

/**
 * Waits until a spawned node is quiet (under 10% of a core for a second, at most 60 s): once it
 * serves, a node warms its voice stack up (flite, the VAD model), which would be measured too.
 */
async function settled(node: ServerProcess): Promise<void> {
  const until = performance.now() + 60_000;
  while (performance.now() < until) {
    const before = processTicks(node.child.pid);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    if ((processTicks(node.child.pid) - before) * 10 < 100) return;
  }
}

/** The same session-start load on one node, then over two, both `voxflow --serve` processes on one database. */
async function measureNodes(cluster: TestPostgres, rows: BenchRow[]): Promise<void> {
  const url = await cluster.createDatabase('voxflow_bench_nodes');
  const env = { VOXFLOW_DATABASE_URL: url, VOXFLOW_SECRET_KEY: randomBytes(32).toString('base64'), VOXFLOW_JWT_SECRET: randomBytes(48).toString('base64') };
  const dirs: string[] = [];
  const nodes: ServerProcess[] = [];
  const node = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'voxflow-bench-node-'));
    dirs.push(dir);
    const started = await spawnServer([], { ...env, VOXFLOW_DATA_DIR: dir }, 60_000);
    nodes.push(started);
    await settled(started);
    return started;
  };
  try {
    const a = await node();
    const signup = await call(a.url, '/auth/signup', { email: `bench-${Date.now()}@example.com`, password: 'correct horse battery staple' });
    const key = (await call(a.url, '/auth/api-keys?label=bench', undefined, { authorization: `Bearer ${signup.access_token}` })).key as string;
    const flow = await call(a.url, '/v1/flows', { name: 'Guessing game', yaml_content: GUESSING_GAME_YAML }, { 'x-service-key': key });
    const body = { flow_id: flow.id };
    const script = new URL('./write-clients.ts', import.meta.url).pathname;
    const measure = async (urls: string[]) => {
      const { stdout } = await run$(process.execPath, ['--import', 'tsx', script, urls.join(','), '/v1/sessions', key, JSON.stringify(body), '400', '8', 'wall'], { maxBuffer: 1 << 20 });
      return JSON.parse(stdout) as { times: number[]; wallMs: number };
    };
    const how = (what: string) =>
      `50 rounds of 8 concurrent session starts ${CLIENT}, ${what}; each node a \`voxflow --serve\` process (tsx) with its own pool of 10 on one PostgreSQL; ${load1()}`;
    const value = ({ times, wallMs }: { times: number[]; wallMs: number }) =>
      `${ms(percentile(times, 50))} p50, ${ms(percentile(times, 95))} p95; ${Math.round((times.length / wallMs) * 1000)} starts/s`;
    const one = await measure([a.url]);
    rows.push({ name: 'PostgreSQL: POST /v1/sessions, eight writers, one node', value: value(one), target: SESSION_TARGET_EIGHT, how: how('all to one node (the second not yet started)') });
    const b = await node();
    const two = await measure([a.url, b.url]);
    rows.push({ name: 'PostgreSQL: POST /v1/sessions, eight writers, two nodes', value: value(two), target: SESSION_TARGET_EIGHT, how: how('writer w to node w mod 2') });
    rows.push({
      name: 'PostgreSQL: two nodes ÷ one, session starts per second',
      value: `${(two.times.length / two.wallMs / (one.times.length / one.wallMs)).toFixed(2)}`,
      how: `the two rows above; both nodes, the clients and PostgreSQL share this machine's ${availableParallelism()} cores`,
    });
  } finally {
    for (const started of nodes) {
      started.child.kill('SIGTERM');
      await started.exited;
    }
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}

/** CPU ticks of the cluster's postmaster and every process it started (its backends, the WAL writer…), so far. */
export function clusterTicks(cluster: TestPostgres): number {
  const postmaster = Number(readFileSync(join(cluster.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  let ticks = processTicks(postmaster);
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The parent's pid is the field after the state, past the command's closing parenthesis.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster) ticks += processTicks(Number(pid));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return ticks;
}

/**
 * pg_stat_statements and pg_stat_wal of the database at `url` (the extension made there), reset
 * before a load and read after it: what remains inside PostgreSQL per request.
 */
function insideOf(url: () => string): NonNullable<StoreUnderTest['inside']> {
  const query = async <T>(sql: string): Promise<T[]> => {
    const client = new pg.Client({ connectionString: url() });
    await client.connect();
    try {
      return (await client.query(sql)).rows as T[];
    } finally {
      await client.end();
    }
  };
  return {
    async reset() {
      await query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      await query('SELECT pg_stat_statements_reset(), pg_stat_reset_shared(\'wal\')');
    },
    async read(what, requests) {
      const statements = await query<{ query: string; calls: string; total: number; mean: number }>(
        `SELECT query, calls, total_exec_time + total_plan_time AS total, mean_exec_time AS mean FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND calls >= ${Math.max(1, Math.floor(requests / 10))}
         ORDER BY total_exec_time DESC LIMIT 6`,
      );
      const wal = (await query<{ wal_records: string; wal_sync: string }>('SELECT wal_records, wal_sync FROM pg_stat_wal'))[0];
      const found: BenchRow[] = statements.map((s) => ({
        name: `PostgreSQL inside, ${what}: ${s.query.replace(/\s+/g, ' ').slice(0, 90)}`,
        value: `${(Number(s.calls) / requests).toFixed(2)} per request, ${(s.mean * 1000).toFixed(0)} µs each (${((s.total * 1000) / requests).toFixed(0)} µs per request)`,
        how: `pg_stat_statements over the ${requests} requests of the row (execution and planning time in the backend; its CPU for these cached reads); ${load1()}`,
      }));
      if (wal) {
        found.push({
          name: `PostgreSQL inside, ${what}: WAL flushes (fsync) per request`,
          value: `${(Number(wal.wal_sync) / requests).toFixed(2)} (${wal.wal_records} WAL records in all)`,
          how: `pg_stat_wal.wal_sync over the ${requests} requests, the whole cluster`,
        });
      }
      return found;
    },
  };
}

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const cluster = await startPostgres({ settings: { shared_preload_libraries: 'pg_stat_statements' } });
  let apiUrl = '';
  try {
    const floorUrl = await cluster.createDatabase('voxflow_bench_floor');
    const keys = { secretKey: randomBytes(32).toString('base64'), jwtSecret: randomBytes(48).toString('base64') };
    const stores: StoreUnderTest[] = [
      {
        label: 'sql.js',
        start: () => startTestServer(UNLIMITED, AS_PRODUCTION),
        floor: async (server) => ({
          times: await fsyncFloor(server.dataDir, 300),
          name: 'fsync floor: append 256 B + fdatasync',
          how: '300 appends to a file in the data folder, one at a time',
        }),
        diskFloor: (server) => fsyncFloor(server.dataDir, 300),
      },
      {
        label: 'PostgreSQL',
        start: async () => startTestServer({ ...UNLIMITED, ...keys, databaseUrl: (apiUrl = await cluster.createDatabase('voxflow_bench_api')) }, AS_PRODUCTION),
        floor: async () => ({
          times: await commitFloor(floorUrl, 300),
          name: 'commit floor: INSERT of one small row, autocommit',
          how: `300 INSERTs of a 200-byte row, one at a time, one \`pg\` connection from this process; the cluster the bench started, fsync and synchronous_commit on, on the same disk`,
        }),
        // The cluster's own directory: the same filesystem as its data files.
        diskFloor: () => fsyncFloor(cluster.dir, 300),
        processTicks: () => clusterTicks(cluster),
        inside: insideOf(() => apiUrl),
      },
    ];
    for (const store of stores) await measureStore(store, rows);
    await measureNodes(cluster, rows);
  } finally {
    await cluster.stop();
  }
  return rows;
}
