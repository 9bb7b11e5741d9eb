// `npm run bench -- attack`: the server tried as an attacker would, on the embedded store and on
// PostgreSQL, with counts. Not a timing: each row says how many attempts were made and how many
// were refused as they should be; anything else is printed with the request that got through.
// The suite has a test for each of these refusals; this is the same ground covered wider, for the
// figures docs/hosting.md#what-an-attacker-was-tried-with reports.
//
// Two accounts on one server: a victim with a flow, a session, a webhook, a secret and an API
// key, and an attacker who knows every one of their ids. Then:
// - cross-account: every route that takes an id, with the attacker's token and key, each method;
// - injection: SQL and JSON payloads in names, query strings and ids;
// - NUL characters: in bodies, query strings and paths;
// - outbound targets: webhooks and model base URLs aimed at this host and at private, reserved
//   and metadata addresses, spelled every way an address can be spelled;
// - credentials: forged, expired, unsigned and revoked tokens and keys;
// - oversized and deeply nested bodies;
// - SIGKILL mid-write: a `voxflow --serve` process killed while four clients write, restarted on
//   the same data, every acknowledged write looked for.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres, type TestPostgres } from '../support/postgres.ts';
import { createAccount, createFlow, GUESSING_GAME_YAML, startTestServer, type TestServer } from '../support/server.ts';
import { spawnServer, type ServerProcess } from '../support/spawn-server.ts';
import { connectVoice } from '../support/voice-client.ts';
import type { BenchRow } from './bench-kit.ts';

interface Tally {
  attempts: number;
  held: number;
  /** What got through: method, path and status, for whoever reads a failed row. */
  through: string[];
}

const tally = (): Tally => ({ attempts: 0, held: 0, through: [] });

function count(t: Tally, held: boolean, what: string): void {
  t.attempts++;
  if (held) t.held++;
  else if (t.through.length < 10) t.through.push(what);
}

/** No rate limit: the bench counts refusals for what they are, not 429s. */
const OPEN = { rateLimit: { authPerMinute: 1e9, credentialPerMinute: 1e9, ipPerMinute: 1e9 }, host: '0.0.0.0' };

async function victimAndAttacker(server: TestServer) {
  const victim = await createAccount(server);
  const attacker = await createAccount(server);
  const flowId = await createFlow(server, victim.apiKey, 'Victim flow');
  // A call the victim's backend started and the caller ended: it leaves a session with a timeline.
  const started = await server.request('POST', '/v1/sessions', { apiKey: victim.apiKey, body: { flow_id: flowId } });
  const client = await connectVoice(started.body.ws_url as string);
  const sessionId = (await client.waitFor('session_started')).session_id as string;
  client.send({ type: 'end' });
  await client.waitFor('session_ended');
  await client.closed;
  const hook = await server.request('POST', '/v1/webhooks', { jwt: victim.jwt, body: { url: 'https://93.184.216.34/hooks' } });
  await server.request('PUT', '/v1/secrets/crm_token', { jwt: victim.jwt, body: { value: 'victim-secret-value-0001' } });
  const test = await server.request('POST', `/v1/flows/${flowId}/tests`, { apiKey: victim.apiKey, body: { yaml_content: 'name: greets\nsteps:\n  - expect: {state: setup}\n' } });
  return { victim, attacker, flowId, sessionId, webhookId: hook.body.id as string, testId: test.body?.id as string, keyId: victim.apiKeyId };
}

async function crossAccount(server: TestServer, t: Tally): Promise<void> {
  const { victim, attacker, flowId, sessionId, webhookId, testId, keyId } = await victimAndAttacker(server);
  const paths: Array<[string, string, unknown?]> = [
    ['GET', `/v1/flows/${flowId}`],
    ['GET', `/v1/flows/${flowId}/json`],
    ['GET', `/v1/flows/${flowId}/draft`],
    ['GET', `/v1/flows/${flowId}/versions`],
    ['GET', `/v1/flows/${flowId}/versions/1`],
    ['GET', `/v1/flows/${flowId}/export/pipecat`],
    ['GET', `/v1/flows/${flowId}/tests`],
    ['GET', `/v1/flows/${flowId}/tests/${testId}`],
    ['GET', `/v1/flows/${flowId}/tests/export`],
    ['GET', `/v1/flows/${flowId}/tests/runs`],
    ['PUT', `/v1/flows/${flowId}`, { name: 'taken', yaml_content: GUESSING_GAME_YAML }],
    ['PUT', `/v1/flows/${flowId}/json`, { id: 'x' }],
    ['PUT', `/v1/flows/${flowId}/draft`, { yaml_content: GUESSING_GAME_YAML }],
    ['POST', `/v1/flows/${flowId}/publish`, {}],
    ['POST', `/v1/flows/${flowId}/versions/1/publish`, {}],
    ['POST', `/v1/flows/${flowId}/tests`, { yaml_content: 'name: mine\nsteps:\n  - expect: {state: setup}\n' }],
    ['PUT', `/v1/flows/${flowId}/tests/${testId}`, { yaml_content: 'name: mine\nsteps:\n  - expect: {state: setup}\n' }],
    ['POST', `/v1/flows/${flowId}/tests/run`, {}],
    ['DELETE', `/v1/flows/${flowId}/tests/${testId}`],
    ['DELETE', `/v1/flows/${flowId}/draft`],
    ['DELETE', `/v1/flows/${flowId}`],
    ['POST', '/v1/sessions', { flow_id: flowId }],
    ['GET', `/v1/sessions/${sessionId}`],
    ['GET', `/v1/sessions/${sessionId}/events`],
    ['GET', `/v1/sessions/${sessionId}/recording`],
    ['GET', `/v1/webhooks/${webhookId}/deliveries`],
    ['DELETE', `/v1/webhooks/${webhookId}`],
    ['DELETE', '/v1/secrets/crm_token'],
    ['DELETE', `/auth/api-keys/${keyId}`],
  ];
  for (const [method, path, body] of paths) {
    for (const credential of [{ jwt: attacker.jwt }, { apiKey: attacker.apiKey }]) {
      const answer = await server.request(method, path, { ...credential, ...(body === undefined ? {} : { body }) });
      // Refused (403/404), or not the attacker's to do with this credential at all (401).
      const refused = [401, 403, 404].includes(answer.status);
      // A list the attacker may read is their own: it must not hold the victim's items.
      count(t, refused || (answer.status === 200 && !answer.text.includes(flowId) && !answer.text.includes(sessionId)), `${method} ${path} with ${Object.keys(credential)[0]}: ${answer.status}`);
    }
  }
  // The attacker's own lists never show the victim's things.
  for (const path of ['/v1/flows', '/v1/sessions', '/v1/webhooks', '/v1/secrets', '/auth/api-keys']) {
    const answer = await server.request('GET', path, { jwt: attacker.jwt });
    count(t, answer.status === 200 && !answer.text.includes(flowId) && !answer.text.includes(sessionId) && !answer.text.includes(webhookId) && !answer.text.includes('crm_token') && !answer.text.includes(keyId), `GET ${path}: the victim's items listed`);
  }
  // And everything of the victim's is still there.
  const still = await Promise.all([`/v1/flows/${flowId}`, `/v1/sessions/${sessionId}`, `/v1/flows/${flowId}/tests/${testId}`].map((path) => server.request('GET', path, { apiKey: victim.apiKey })));
  count(t, still.every((r) => r.status === 200) && still[0]!.body.name === 'Victim flow', "the victim's flow, session and test after the attempts");
}

const INJECTIONS = [
  "' OR '1'='1",
  "'; DROP TABLE flows; --",
  '" OR ""="',
  "1; SELECT pg_sleep(5)--",
  "') UNION SELECT email, password_hash FROM accounts--",
  '{"$gt": ""}',
  '%27%20OR%201%3D1',
  "x' AND 1=(SELECT COUNT(*) FROM pg_tables)--",
  '\\x27 OR 1=1',
  'Robert\'); DELETE FROM sessions;--',
];

async function injection(server: TestServer, t: Tally): Promise<void> {
  const { victim, attacker, flowId } = await victimAndAttacker(server);
  for (const payload of INJECTIONS) {
    const made = await server.request('POST', '/v1/flows', { apiKey: attacker.apiKey, body: { name: payload, yaml_content: GUESSING_GAME_YAML } });
    const read = made.status === 201 ? await server.request('GET', `/v1/flows/${made.body.id}`, { apiKey: attacker.apiKey }) : null;
    count(t, made.status === 201 && read?.body.name === payload, `a flow named ${payload}: ${made.status}, read back ${read?.body?.name}`);
    for (const [method, path] of [
      ['GET', `/v1/flows/${encodeURIComponent(payload)}`],
      ['GET', `/v1/sessions/${encodeURIComponent(payload)}`],
      ['GET', `/v1/sessions?flow_id=${encodeURIComponent(payload)}`],
      ['GET', `/v1/sessions?limit=${encodeURIComponent(payload)}`],
      ['GET', `/v1/flows/${flowId}/versions/${encodeURIComponent(payload)}`],
      ['DELETE', `/v1/secrets/${encodeURIComponent(payload)}`],
      ['PUT', `/v1/secrets/${encodeURIComponent(payload)}`],
    ] as const) {
      const answer = await server.request(method, path, { jwt: attacker.jwt, ...(method === 'PUT' ? { body: { value: 'x' } } : {}) });
      // A filter that matches nothing is an empty list; anything else is refused as not found or invalid.
      const emptyList = answer.status === 200 && Array.isArray(answer.body) && answer.body.length === 0;
      count(t, (answer.status >= 400 && answer.status < 500) || emptyList, `${method} ${path}: ${answer.status}`);
    }
    const login = await server.request('POST', '/auth/login', { body: { email: payload, password: payload } });
    count(t, login.status >= 400 && login.status < 500, `login as ${payload}: ${login.status}`);
  }
  const flows = await server.request('GET', '/v1/flows', { apiKey: victim.apiKey });
  count(t, flows.status === 200 && flows.body.length === 1 && flows.body[0].id === flowId, "the victim's flows after the payloads");
}

async function nulCharacters(server: TestServer, t: Tally): Promise<void> {
  const { attacker, flowId } = await victimAndAttacker(server);
  const nul = 'a\u0000b';
  const attempts: Array<[string, string, { body?: unknown; jwt?: string; apiKey?: string }]> = [
    ['POST', '/auth/signup', { body: { email: `n${nul}@example.com`, password: 'correct horse battery staple' } }],
    ['POST', '/auth/login', { body: { email: `n${nul}@example.com`, password: nul } }],
    ['POST', '/auth/login', { body: {} }],
    ['POST', '/auth/api-keys?label=a%00b', { jwt: attacker.jwt }],
    ['POST', '/v1/flows', { apiKey: attacker.apiKey, body: { name: nul, yaml_content: GUESSING_GAME_YAML } }],
    ['POST', '/v1/flows', { apiKey: attacker.apiKey, body: { name: 'ok', yaml_content: `${GUESSING_GAME_YAML}# ${nul}\n` } }],
    ['GET', '/v1/flows/a%00b', { apiKey: attacker.apiKey }],
    ['GET', `/v1/sessions?flow_id=a%00b`, { apiKey: attacker.apiKey }],
    ['GET', '/v1/sessions/a%00b', { apiKey: attacker.apiKey }],
    ['POST', '/v1/sessions', { apiKey: attacker.apiKey, body: { flow_id: nul } }],
    ['POST', '/v1/sessions', { apiKey: attacker.apiKey, body: { flow_id: flowId, context: { name: nul } } }],
    ['POST', '/v1/sessions', { apiKey: attacker.apiKey, body: { flow_id: flowId, metadata: { crm: nul } } }],
    ['PUT', '/v1/secrets/a%00b', { jwt: attacker.jwt, body: { value: 'x' } }],
    ['PUT', '/v1/secrets/ok', { jwt: attacker.jwt, body: { value: nul } }],
    ['POST', '/v1/webhooks', { jwt: attacker.jwt, body: { url: `https://93.184.216.34/${nul}` } }],
    ['PATCH', '/v1/providers', { jwt: attacker.jwt, body: { llm_model: nul } }],
    ['DELETE', '/v1/webhooks/a%00b', { jwt: attacker.jwt }],
    ['POST', '/v1/do-not-call', { apiKey: attacker.apiKey, body: { number: `+1555${nul}` } }],
    ['POST', '/v1/phone-numbers', { jwt: attacker.jwt, body: { carrier: 'twilio', number: `+1555${nul}`, flow_id: nul } }],
  ];
  for (const [method, path, options] of attempts) {
    const answer = await server.request(method, path, options);
    count(t, answer.status >= 400 && answer.status < 500, `${method} ${path}: ${answer.status} ${answer.text.slice(0, 120)}`);
  }
}

/** Every way of writing an address that must not be reached from a hosted server. */
function insideTargets(serverPort: number): string[] {
  const own = Object.values(networkInterfaces())
    .flat()
    .filter((i) => i && !i.internal)
    .map((i) => (i!.family === 'IPv6' ? `[${i!.address.split('%')[0]}]` : i!.address));
  const hosts = [
    '127.0.0.1', '127.1', '2130706433', '0x7f000001', '0177.0.0.1', 'localhost', 'localhost.', '0.0.0.0', '[::1]', '[::]',
    '[::ffff:127.0.0.1]', '[::127.0.0.1]', '[64:ff9b::7f00:1]', '10.0.0.1', '172.16.0.1', '192.168.1.1', '169.254.169.254',
    '[fe80::1]', '[fc00::1]', '100.64.0.1', '192.0.2.1', '198.18.0.1', '192.0.0.1', '224.0.0.1', '255.255.255.255', ...own,
  ];
  return hosts.flatMap((host) => [`http://${host}:${serverPort}/hooks`, `https://${host}/latest/meta-data`]);
}

async function outbound(server: TestServer, t: Tally): Promise<void> {
  const { attacker } = await victimAndAttacker(server);
  const port = Number(new URL(server.url).port);
  for (const url of insideTargets(port)) {
    const hook = await server.request('POST', '/v1/webhooks', { jwt: attacker.jwt, body: { url } });
    count(t, hook.status === 422 && hook.body?.error?.code === 'webhook_target_not_allowed', `a webhook to ${url}: ${hook.status} ${hook.text.slice(0, 160)}`);
    if (hook.status === 201) await server.request('DELETE', `/v1/webhooks/${hook.body.id}`, { jwt: attacker.jwt });
    // With a key, the server checks it against the URL when it is saved: the request it makes.
    const provider = await server.request('PATCH', '/v1/providers', { jwt: attacker.jwt, body: { llm_provider: 'openai', llm_base_url: url, llm_api_key: 'sk-attack-0001' } });
    // Refused for where it points, not because the key did not work there.
    count(t, provider.status === 422 && /public internet address/.test(provider.text), `a model base URL ${url}: ${provider.status} ${provider.text.slice(0, 160)}`);
  }
}

function forgedJwt(header: object, payload: object, signature = ''): string {
  const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${b64(header)}.${b64(payload)}.${signature}`;
}

async function credentials(server: TestServer, t: Tally): Promise<void> {
  const { attacker } = await victimAndAttacker(server);
  const [, payloadPart] = attacker.jwt.split('.');
  const claims = JSON.parse(Buffer.from(payloadPart!, 'base64url').toString()) as Record<string, unknown>;
  const revoked = await server.request('POST', '/auth/api-keys?label=revoked', { jwt: attacker.jwt });
  await server.request('DELETE', `/auth/api-keys/${revoked.body.id}`, { jwt: attacker.jwt });
  const jwts = [
    forgedJwt({ alg: 'none', typ: 'JWT' }, claims),
    forgedJwt({ alg: 'HS256', typ: 'JWT' }, claims, randomBytes(32).toString('base64url')),
    forgedJwt({ alg: 'HS256', typ: 'JWT' }, { ...claims, exp: Math.floor(Date.now() / 1000) - 60 }, attacker.jwt.split('.')[2]),
    forgedJwt({ alg: 'RS256', typ: 'JWT' }, claims, attacker.jwt.split('.')[2]),
    `${attacker.jwt}x`,
    'not.a.jwt',
    '',
  ];
  const keys = [revoked.body.key as string, `vfk_${randomBytes(24).toString('base64url')}`, attacker.apiKey.slice(0, -1), `${attacker.apiKey}x`, 'vfk_'];
  for (const path of ['/v1/flows', '/v1/sessions', '/v1/secrets', '/auth/api-keys', '/v1/credits/balance']) {
    for (const jwt of jwts) {
      const answer = await server.request('GET', path, { headers: { authorization: `Bearer ${jwt}` } });
      count(t, answer.status === 401, `GET ${path} with a forged token: ${answer.status}`);
    }
    for (const key of keys) {
      const answer = await server.request('GET', path, { headers: { 'x-service-key': key } });
      count(t, answer.status === 401 || (answer.status === 403 && path.startsWith('/auth')), `GET ${path} with a bad key: ${answer.status}`);
    }
  }
}

async function oversized(server: TestServer, t: Tally): Promise<void> {
  const { attacker } = await victimAndAttacker(server);
  const big = 'x'.repeat(3 * 1024 * 1024);
  for (const [path, credential] of [['/v1/flows', { apiKey: attacker.apiKey }], ['/v1/sessions', { apiKey: attacker.apiKey }], ['/auth/signup', {}], ['/v1/webhooks', { jwt: attacker.jwt }]] as const) {
    const answer = await server.request('POST', path, { ...credential, rawBody: JSON.stringify({ name: big }), headers: { 'content-type': 'application/json' } });
    count(t, answer.status === 413, `3 MiB to ${path}: ${answer.status}`);
  }
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  for (const path of ['/v1/flows', '/v1/sessions', '/v1/flows/import/pipecat']) {
    const answer = await server.request('POST', path, { apiKey: attacker.apiKey, rawBody: `{"name":"deep","context":${deep}}`, headers: { 'content-type': 'application/json' } });
    count(t, answer.status === 400 || answer.status === 413 || answer.status === 422, `100,000 levels to ${path}: ${answer.status}`);
  }
  const nested = `id: deep\nversion: "1.0.0"\ninitial_state: s\nstates:\n  s: ${'{a: '.repeat(5_000)}1${'}'.repeat(5_000)}\n`;
  const flow = await server.request('POST', '/v1/flows', { apiKey: attacker.apiKey, body: { name: 'deep', yaml_content: nested } });
  count(t, flow.status === 422 && flow.text.includes('too_deeply_nested'), `a YAML 5,000 levels deep: ${flow.status}`);
}

/** A `voxflow --serve` process SIGKILLed while four clients write flows, `rounds` times; acknowledged writes looked for after each restart. */
async function killMidWrite(rounds: number, env: NodeJS.ProcessEnv): Promise<{ acknowledged: number; lost: number; kills: number }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'voxflow-attack-'));
  let server: ServerProcess | null = null;
  try {
    server = await spawnServer(['--data-dir', dataDir], env, 60_000);
    const post = async (url: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json().catch(() => null)) as any };
    };
    const signup = await post(server.url, '/auth/signup', { email: `kill-${Date.now()}@example.com`, password: 'correct horse battery staple' });
    const key = (await post(server.url, '/auth/api-keys?label=kill', undefined, { authorization: `Bearer ${signup.body.access_token}` })).body.key as string;
    const acknowledged = new Set<string>();
    const statuses = new Map<number, number>();
    let lost = 0;
    for (let round = 0; round < rounds; round++) {
      let stop = false;
      const url = server.url;
      const writer = async () => {
        while (!stop) {
          try {
            const made = await post(url, '/v1/flows', { name: `r${round}`, yaml_content: GUESSING_GAME_YAML }, { 'x-service-key': key });
            if (made.status === 201) acknowledged.add(made.body.id as string);
            else statuses.set(made.status, (statuses.get(made.status) ?? 0) + 1);
            // 429: one account's flow uploads are parsed at most two at a time.
            if (made.status === 429) await new Promise((resolve) => setTimeout(resolve, 100));
          } catch (error) {
            if (!stop && process.env.VOXFLOW_ATTACK_DEBUG) process.stderr.write(`write failed: ${String(error)}\n`);
            return;
          }
        }
      };
      const writers = Array.from({ length: 4 }, writer);
      // The kill comes at a random moment once writes are being acknowledged (a fresh process
      // warms up first; a fixed delay could kill it before any write, testing nothing).
      const before = acknowledged.size;
      const deadline = performance.now() + 60_000;
      while (acknowledged.size < before + 5 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 1000));
      server.child.kill('SIGKILL');
      await server.exited;
      stop = true;
      await Promise.all(writers);
      server = await spawnServer(['--data-dir', dataDir], env, 60_000);
      const listed = await fetch(`${server.url}/v1/flows`, { headers: { 'x-service-key': key } }).then((r) => r.json() as Promise<Array<{ id: string }>>);
      const ids = new Set(listed.map((f) => f.id));
      lost = [...acknowledged].filter((id) => !ids.has(id)).length;
      if (lost > 0) break;
    }
    if (statuses.size > 0) process.stderr.write(`writes not acknowledged, by status: ${JSON.stringify(Object.fromEntries(statuses))}\n`);
    return { acknowledged: acknowledged.size, lost, kills: rounds };
  } finally {
    server?.child.kill('SIGKILL');
    await server?.exited;
    await rm(dataDir, { recursive: true, force: true });
  }
}

const KILLS = Number(process.env.VOXFLOW_ATTACK_KILLS ?? 5);

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  let cluster: TestPostgres | null = null;
  try {
    cluster = await startPostgres({ durable: true });
    const keys = { secretKey: randomBytes(32).toString('base64'), jwtSecret: randomBytes(48).toString('base64') };
    const stores: Array<[string, () => Promise<TestServer>, () => Promise<NodeJS.ProcessEnv>]> = [
      ['embedded', () => startTestServer(OPEN), async () => ({})],
      [
        'PostgreSQL',
        async () => startTestServer({ ...OPEN, ...keys, databaseUrl: await cluster!.createDatabase(`voxflow_attack_${Date.now()}`) }),
        async () => ({ VOXFLOW_DATABASE_URL: await cluster!.createDatabase(`voxflow_attack_kill_${Date.now()}`), VOXFLOW_SECRET_KEY: keys.secretKey, VOXFLOW_JWT_SECRET: keys.jwtSecret }),
      ],
    ];
    const attacks: Array<[string, (server: TestServer, t: Tally) => Promise<void>]> = [
      ["another account's data, with the attacker's own token and key", crossAccount],
      ['SQL and JSON injection in names, query strings and ids', injection],
      ['NUL characters in bodies, query strings and paths', nulCharacters],
      ['webhooks and model URLs aimed inside (this host, private, reserved, metadata)', outbound],
      ['forged, expired, unsigned and revoked credentials', credentials],
      ['oversized and deeply nested bodies', oversized],
    ];
    for (const [store, start, killEnv] of stores) {
      for (const [what, attack] of attacks) {
        const server = await start();
        const t = tally();
        try {
          await attack(server, t);
        } finally {
          await server.close();
        }
        if (t.through.length > 0) process.stderr.write(`${store}, ${what}: got through:\n  ${t.through.join('\n  ')}\n`);
        rows.push({ name: `${store}: ${what}`, value: `${t.held} of ${t.attempts} refused`, target: 'all', how: 'the refusal the API documents for each (404 for another account\'s ids, 401, 413, 422), never a 500 nor the data' });
      }
      const killed = await killMidWrite(KILLS, await killEnv());
      rows.push({
        name: `${store}: SIGKILL while four clients write flows`,
        value: `${killed.acknowledged} writes acknowledged, ${killed.lost} lost, over ${killed.kills} kills`,
        target: '0 lost',
        how: 'voxflow --serve (from the sources, tsx) killed 0–1 s after its fifth acknowledged write of each round, restarted on the same data, every acknowledged flow listed',
      });
    }
  } finally {
    await cluster?.stop();
  }
  return rows;
}
