// Not a bench: the SQL statements one request sends to PostgreSQL, in order, for GET /v1/flows,
// POST /v1/sessions and POST /v1/flows with an API key against an in-process server on a
// throwaway cluster, so extra round trips on the write path show (`npx tsx test/bench/profile-postgres.ts`);
// with `load`, then GET /v1/flows under autocannon as api.bench.ts runs it (profile that with --cpu-prof).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startPostgres } from '../support/postgres.ts';
import { GUESSING_GAME_YAML, createAccount, createFlow, startTestServer } from '../support/server.ts';

const cluster = await startPostgres();
const statements: string[] = [];
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
let since = performance.now();
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string };
  const text = (typeof first === 'string' ? first : (first?.text ?? '?')).replace(/\s+/g, ' ').slice(0, 120);
  const sent = performance.now();
  const result = query.apply(this, args);
  // Each statement with when it was sent (ms into the request) and how long its answer took.
  if (result instanceof Promise) {
    void result.then(
      () => statements.push(`+${(sent - since).toFixed(2)} ms, ${(performance.now() - sent).toFixed(2)} ms: ${text}`),
      () => statements.push(`+${(sent - since).toFixed(2)} ms, failed: ${text}`),
    );
  } else statements.push(`+${(sent - since).toFixed(2)} ms: ${text}`);
  return result;
} as typeof pg.Client.prototype.query;
try {
  const server = await startTestServer({
    databaseUrl: await cluster.createDatabase('voxflow_profile'),
    secretKey: randomBytes(32).toString('base64'),
    jwtSecret: randomBytes(48).toString('base64'),
    rateLimit: { authPerMinute: 1e6, credentialPerMinute: 1e9, ipPerMinute: 1e9 },
  }, { checkResponses: false });
  const { apiKey } = await createAccount(server);
  const flowId = await createFlow(server, apiKey);
  const show = async (label: string, send: () => Promise<unknown>) => {
    await send(); // the first of each warms what is cached
    await new Promise((r) => setTimeout(r, 200));
    statements.length = 0;
    const started = performance.now();
    since = started;
    await send();
    const took = performance.now() - started;
    await new Promise((r) => setTimeout(r, 200)); // and what the request left running
    console.log(`\n${label}: ${statements.length} statements, ${took.toFixed(1)} ms`);
    for (const s of statements) console.log(`  ${s}`);
  };
  await show('GET /v1/flows', () => server.request('GET', '/v1/flows', { apiKey }));
  await show('POST /v1/sessions', () => server.request('POST', '/v1/sessions', { apiKey, body: { flow_id: flowId } }));
  let i = 0;
  await show('POST /v1/flows', () => server.request('POST', '/v1/flows', { apiKey, body: { name: `P ${i++}`, yaml_content: GUESSING_GAME_YAML } }));
  if (process.argv[2] === 'load') {
    // `node --cpu-prof --import tsx test/bench/profile-postgres.ts load`: where GET /v1/flows's time goes.
    const { load } = await import('./api.bench.ts');
    console.log('\nGET /v1/flows under load:', JSON.stringify(await load(`${server.url}/v1/flows`, { 'x-service-key': apiKey })));
  }
  await server.close().catch((error: unknown) => console.error('close:', error));
} finally {
  await cluster.stop();
}
process.exit(0);
