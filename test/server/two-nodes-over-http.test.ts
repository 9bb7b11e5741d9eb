// Two Voxflow nodes on one PostgreSQL, over real HTTP and WebSockets, as a load balancer would
// spread one business's calls over them (docs/hosting.md#several-nodes-on-postgresql): whatever one
// node did, the other serves; a session token is good once, on whichever node it reaches; a call
// lives on the node that accepted it and every node lists it; the per-account session cap holds
// over both nodes; a node killed with SIGKILL mid-write loses nothing it acknowledged while the
// other goes on, and the calls it held are ended by the other node once it has been silent a
// minute; and when both run the webhook outbox, each event reaches the business once.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { admitAtOnce, tryConnect, type ConnectOutcome, type OpenSession } from '../api/admission-clients.ts';
import { twoServersForThisFile } from '../support/postgres-two-servers.ts';
import { createAccount, createFlow, GUESSING_GAME_YAML, type TestServer } from '../support/server.ts';
import { spawnServer, type ServerProcess } from '../support/spawn-server.ts';
import { wsUrl } from '../support/voice-client.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

const nodes = twoServersForThisFile();

/** The ws_url a node handed out, sent to the other node instead (the load balancer's choice). */
function onNode(server: { url: string }, handedOut: string): string {
  const url = new URL(handedOut);
  const target = new URL(server.url);
  url.host = target.host;
  return url.toString();
}

async function startToken(server: TestServer, apiKey: string): Promise<string> {
  const started = await server.request('POST', '/v1/sessions', { apiKey, body: {} });
  expect(started.status).toBe(200);
  return started.body.ws_url as string;
}

function opened(outcome: ConnectOutcome): OpenSession {
  if (!outcome.ok) throw new Error(`the session was refused: ${outcome.status} ${outcome.code} ${outcome.message}`);
  return outcome;
}

describe('two nodes on one PostgreSQL, over HTTP', () => {
  it('a flow made on A is read, listed and edited on B, and A sees the edit', async () => {
    const { a, b } = await nodes.start();
    const account = await createAccount(a);
    const flowId = await createFlow(a, account.apiKey, 'Guessing game');

    const read = await b.request('GET', `/v1/flows/${flowId}`, { apiKey: account.apiKey });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: flowId, name: 'Guessing game', yaml_content: GUESSING_GAME_YAML });
    // A's list is cached on A; B's edit must reach it.
    expect((await a.request('GET', '/v1/flows', { apiKey: account.apiKey })).body.map((f: { name: string }) => f.name)).toEqual(['Guessing game']);
    const listed = await b.request('GET', '/v1/flows', { jwt: account.jwt });
    expect(listed.body.map((f: { id: string }) => f.id)).toEqual([flowId]);

    const edited = await b.request('PUT', `/v1/flows/${flowId}`, { apiKey: account.apiKey, body: { name: 'Twenty questions' } });
    expect(edited.status).toBe(200);
    await expect
      .poll(async () => (await a.request('GET', '/v1/flows', { apiKey: account.apiKey })).body.map((f: { name: string }) => f.name), { timeout: 5_000, interval: 50 })
      .toEqual(['Twenty questions']);
    expect((await a.request('GET', `/v1/flows/${flowId}`, { apiKey: account.apiKey })).body.name).toBe('Twenty questions');
  });

  it('a session token made on A connects on B, once: a second connect to A or to B is refused; A lists the call live on B, then ended', { timeout: 30_000 }, async () => {
    const { a, b } = await nodes.start();
    const account = await createAccount(a);
    const handedOut = await startToken(a, account.apiKey);

    const call = opened(await tryConnect(onNode(b, handedOut)));
    await expect.poll(() => call.events.some((e) => e.type === 'session_started'), { timeout: 10_000 }).toBe(true);
    for (const again of [handedOut, onNode(b, handedOut)]) {
      expect(await tryConnect(again)).toMatchObject({ ok: false, status: 401, code: 'session_token_invalid' });
    }

    const sessionId = call.events.find((e) => e.type === 'session_started')!.session_id as string;
    const listedOnA = await a.request('GET', '/v1/sessions', { apiKey: account.apiKey });
    expect(listedOnA.body).toEqual([expect.objectContaining({ id: sessionId, status: 'connected', transport: 'websocket' })]);

    await call.end();
    const afterEnd = await a.request('GET', '/v1/sessions', { apiKey: account.apiKey });
    expect(afterEnd.body).toEqual([expect.objectContaining({ id: sessionId, status: 'ended', end_reason: expect.any(String) })]);
  });

  it('a call live on A is listed by B, with the engine router too', { timeout: 30_000 }, async () => {
    const { a, b } = await nodes.start();
    const account = await createAccount(b);
    const call = opened(await tryConnect(wsUrl(a.url, '/ws?mode=assistant'), { 'x-service-key': account.apiKey }));
    await expect.poll(() => call.events.some((e) => e.type === 'session_started'), { timeout: 10_000 }).toBe(true);
    const sessionId = call.events.find((e) => e.type === 'session_started')!.session_id as string;
    expect((await b.request('GET', '/v1/sessions', { jwt: account.jwt })).body).toEqual([expect.objectContaining({ id: sessionId, status: 'connected' })]);
    await call.end();
  });

  it('cap 3 per account: 12 calls asked for at once over both nodes (tokens and the engine router) connect exactly 3; the rest get 429 too_many_sessions', { timeout: 60_000 }, async () => {
    const { a, b } = await nodes.start({ engine: { sessionsPerAccount: 3 } });
    const [greedy, other] = [await createAccount(a), await createAccount(b)];
    const tokens = await Promise.all(Array.from({ length: 6 }, (_, i) => startToken(i % 2 === 0 ? a : b, greedy.apiKey)));
    const { open, refused } = await admitAtOnce([
      // Tokens made on one node, each redeemed on the other.
      ...tokens.map((url, i) => () => tryConnect(onNode(i % 2 === 0 ? b : a, url))),
      ...Array.from({ length: 6 }, (_, i) => () => tryConnect(wsUrl((i % 2 === 0 ? a : b).url, '/ws?mode=assistant'), { 'x-service-key': greedy.apiKey })),
    ]);
    try {
      expect(open).toHaveLength(3);
      expect(refused).toHaveLength(9);
      for (const refusal of refused) expect(refusal).toMatchObject({ status: 429, code: 'too_many_sessions', message: expect.stringMatching(/3 live voice sessions/) });
      const live = (await b.request('GET', '/v1/sessions', { apiKey: greedy.apiKey })).body.filter((s: { status: string }) => s.status === 'connected');
      expect(live).toHaveLength(3);

      // Another account has its own room on both nodes.
      const theirs = opened(await tryConnect(wsUrl(b.url, '/ws?mode=assistant'), { 'x-service-key': other.apiKey }));
      await theirs.end();

      // Once one call ends, one more connects, on either node; a token refused at the cap was not used up.
      await open[0]!.end();
      const waiting = tokens.map((url, i) => onNode(i % 2 === 0 ? b : a, url));
      let next: ConnectOutcome | undefined;
      for (const url of waiting) {
        next = await tryConnect(url);
        if (next.ok || next.code !== 'session_token_invalid') break;
      }
      expect(next).toMatchObject({ ok: true });
      open.push(next as OpenSession);
    } finally {
      await Promise.all(open.map((session) => session.end()));
    }
  });

  it('a node killed with SIGKILL mid-write loses no acknowledged write, and the other node keeps serving', { timeout: 90_000 }, async () => {
    const { a, nodeEnv } = await nodes.start();
    const account = await createAccount(a);
    let killed: ServerProcess | null = null;
    const childDataDir = await mkdtemp(join(tmpdir(), 'voxflow-node-'));
    try {
      killed = await spawnServer(['--data-dir', childDataDir], nodeEnv);
      const url = killed.url;
      const acknowledged = new Map<string, string>();
      let stop = false;
      const writer = async (w: number) => {
        for (let i = 0; !stop; i++) {
          const name = `writer ${w} #${i}`;
          try {
            const response = await fetch(`${url}/v1/flows`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-service-key': account.apiKey },
              body: JSON.stringify({ name, yaml_content: GUESSING_GAME_YAML }),
            });
            const body = (await response.json()) as { id: string };
            if (response.status === 201) acknowledged.set(body.id, name);
          } catch {
            return; // the connection died with the node: that write was never acknowledged
          }
        }
      };
      const writers = Array.from({ length: 4 }, (_, w) => writer(w));
      // Writes flowing, then the kill at a random moment among them.
      while (acknowledged.size < 10) await delay(10);
      await delay(Math.random() * 300);
      killed.child.kill('SIGKILL');
      await killed.exited;
      stop = true;
      await Promise.all(writers);

      const listed = await a.request('GET', '/v1/flows', { apiKey: account.apiKey });
      expect(listed.status).toBe(200);
      const names = new Map((listed.body as Array<{ id: string; name: string }>).map((f) => [f.id, f.name]));
      for (const [id, name] of acknowledged) expect(names.get(id), `acknowledged flow ${id} lost`).toBe(name);
      // The survivor still takes writes and calls.
      expect((await a.request('POST', '/v1/flows', { apiKey: account.apiKey, body: { name: 'after the kill', yaml_content: GUESSING_GAME_YAML } })).status).toBe(201);
      const call = opened(await tryConnect(onNode(a, await startToken(a, account.apiKey))));
      await call.end();
    } finally {
      killed?.child.kill('SIGKILL');
      await rm(childDataDir, { recursive: true, force: true });
    }
  });

  it('a call live on a node killed with SIGKILL is ended by the other node once the dead one has been silent for the node timeout, and its session.ended goes out once', { timeout: 90_000 }, async () => {
    const receiver = await startWebhookReceiver();
    let killed: ServerProcess | null = null;
    const childDataDir = await mkdtemp(join(tmpdir(), 'voxflow-node-'));
    try {
      // A 4 s node timeout (60 s by default): beats every 0.67 s, sweeps every 2 s.
      const { a, nodeEnv, databaseUrl } = await nodes.start({ nodeTimeoutSeconds: 4, webhooks: { allowPrivate: true, retrySeconds: [0.3, 0.3], timeoutMs: 3_000 } });
      const account = await createAccount(a);
      expect((await a.request('POST', '/v1/webhooks', { jwt: account.jwt, body: { url: receiver.url, events: ['session.ended'] } })).status).toBe(201);
      killed = await spawnServer(['--data-dir', childDataDir], { ...nodeEnv, VOXFLOW_NODE_TIMEOUT_SECONDS: '4' });
      const call = opened(await tryConnect(onNode(killed, await startToken(a, account.apiKey))));
      await expect.poll(() => call.events.some((e) => e.type === 'session_started'), { timeout: 10_000 }).toBe(true);
      const sessionId = call.events.find((e) => e.type === 'session_started')!.session_id as string;
      killed.child.kill('SIGKILL');
      await killed.exited;
      expect((await a.request('GET', `/v1/sessions/${sessionId}`, { apiKey: account.apiKey })).body.status).toBe('connected');
      // When the dead node was last seen, read while its call is still connected (its row stays until then).
      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      try {
        const lastSeen = async () => (await db.query('SELECT n.id, n.last_seen_at FROM nodes n JOIN sessions s ON s.node_id = n.id WHERE s.id = $1', [sessionId])).rows;
        const [deadNode] = await lastSeen();
        expect(deadNode).toBeDefined();
        // Polled until the other node ends it; each poll notes when its answer came back.
        let endSeenAt = 0;
        await expect
          .poll(
            async () => {
              const reason = (await a.request('GET', `/v1/sessions/${sessionId}`, { apiKey: account.apiKey })).body.end_reason;
              endSeenAt = Date.now() / 1000;
              return reason;
            },
            { timeout: 40_000, interval: 250 },
          )
          .toBe('server_restarted');
        // Not before the dead node had been silent for the whole node timeout: the answer that first
        // showed the end came back at least 4 s after the node's last heartbeat. (Measured from the
        // heartbeat, not the kill: on a loaded machine the last beat may come well before the kill.)
        // The row, unless a sweep has removed it already, has not moved since it was read.
        expect(endSeenAt - Number(deadNode.last_seen_at)).toBeGreaterThanOrEqual(4);
        for (const row of await lastSeen()) expect(Number(row.last_seen_at)).toBe(Number(deadNode.last_seen_at));
        // A later sweep removes the row: a killed node leaves nothing behind in nodes.
        await expect.poll(async () => (await db.query('SELECT 1 FROM nodes WHERE id = $1', [deadNode.id])).rows.length, { timeout: 20_000, interval: 250 }).toBe(0);
      } finally {
        await db.end();
      }
      await receiver.waitFor((r) => r.json?.data?.session_id === sessionId, 15_000, 'session.ended of the dead node\'s call');
      await delay(1_500);
      expect(receiver.received.filter((r) => r.json?.data?.session_id === sessionId)).toHaveLength(1);
    } finally {
      killed?.child.kill('SIGKILL');
      await receiver.close();
      await rm(childDataDir, { recursive: true, force: true });
    }
  });

  it("each call's session.ended reaches the business once when both nodes run the webhook outbox", { timeout: 60_000 }, async () => {
    const receiver = await startWebhookReceiver();
    try {
      const { a, b } = await nodes.start({ webhooks: { allowPrivate: true, retrySeconds: [0.3, 0.3], timeoutMs: 3_000 } });
      const account = await createAccount(a);
      const endpoint = await b.request('POST', '/v1/webhooks', { jwt: account.jwt, body: { url: receiver.url, events: ['session.ended'] } });
      expect(endpoint.status).toBe(201);

      // Six calls, three on each node, each made with a token from the other.
      const calls = await Promise.all(Array.from({ length: 6 }, async (_, i) => opened(await tryConnect(onNode(i % 2 === 0 ? a : b, await startToken(i % 2 === 0 ? b : a, account.apiKey))))));
      for (const call of calls) await expect.poll(() => call.events.some((e) => e.type === 'session_started'), { timeout: 10_000 }).toBe(true);
      const ids = calls.map((call) => call.events.find((e) => e.type === 'session_started')!.session_id as string);
      await Promise.all(calls.map((call) => call.end()));

      await expect.poll(() => new Set(receiver.received.map((r) => r.json?.data?.session_id)).size, { timeout: 20_000, interval: 100 }).toBe(6);
      // Time for a second copy to arrive, were either node to send one (a retry is due in 0.3 s).
      await delay(2_000);
      const received = receiver.received.filter((r) => r.json?.type === 'session.ended');
      expect(received.map((r) => r.json.data.session_id).sort()).toEqual([...ids].sort());
      expect(new Set(received.map((r) => r.id)).size).toBe(6);
    } finally {
      await receiver.close();
    }
  });
});

// A node that has served an API key checks it again with each request's first read, in the same
// statement (docs/hosting.md#several-nodes-on-postgresql): what these show is that the shortcut
// never lets a revoked key through, never mistakes an empty answer for a refused key, and never
// reads another account's rows.
describe('two nodes on one PostgreSQL: an API key checked by the read it guards', () => {
  const refused = (response: { status: number; body: any }) => {
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('invalid_credentials');
  };

  it('a key revoked on A is refused on B at its very next request, though B served it just before', { timeout: 30_000 }, async () => {
    const { a, b } = await nodes.start();
    const account = await createAccount(a);
    const flowId = await createFlow(a, account.apiKey, 'Guessing game');
    for (let i = 0; i < 2; i++) {
      expect((await b.request('GET', '/v1/flows', { apiKey: account.apiKey })).body.map((f: { id: string }) => f.id)).toEqual([flowId]);
      expect((await b.request('GET', `/v1/flows/${flowId}`, { apiKey: account.apiKey })).status).toBe(200);
      expect((await b.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: { flow_id: flowId } })).status).toBe(200);
    }

    expect((await a.request('DELETE', `/auth/api-keys/${account.apiKeyId}`, { jwt: account.jwt })).status).toBe(204);

    const list = await b.request('GET', '/v1/flows', { apiKey: account.apiKey });
    refused(list);
    expect(list.text).not.toContain(flowId);
    refused(await b.request('GET', `/v1/flows/${flowId}`, { apiKey: account.apiKey }));
    refused(await b.request('GET', '/v1/credits/balance', { apiKey: account.apiKey }));
    refused(await b.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: { flow_id: flowId } }));
    refused(await a.request('GET', '/v1/flows', { apiKey: account.apiKey }));
    // The refused session start made nothing: the two made before are all there is.
    expect((await b.request('GET', '/v1/sessions', { jwt: account.jwt })).body).toHaveLength(2);
  });

  it('an empty answer is still told apart: an active key with nothing to list gets 200 [], the same key revoked 401', { timeout: 30_000 }, async () => {
    const { a, b } = await nodes.start();
    const account = await createAccount(a);
    for (let i = 0; i < 2; i++) {
      const listed = await b.request('GET', '/v1/flows', { apiKey: account.apiKey });
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual([]);
      expect((await b.request('GET', '/v1/flows/no-such-flow', { apiKey: account.apiKey })).status).toBe(404);
    }
    expect((await b.request('DELETE', `/auth/api-keys/${account.apiKeyId}`, { jwt: account.jwt })).status).toBe(204);
    refused(await b.request('GET', '/v1/flows', { apiKey: account.apiKey }));
    refused(await a.request('GET', '/v1/flows/no-such-flow', { apiKey: account.apiKey }));
    // A key never issued is refused as before, on a node that has seen other keys.
    refused(await b.request('GET', '/v1/flows', { apiKey: `vfk_${'0'.repeat(40)}` }));
  });

  it("another account's key reads only its own account's rows through the checked read", { timeout: 30_000 }, async () => {
    const { a, b } = await nodes.start();
    const owner = await createAccount(a);
    const other = await createAccount(a);
    const flowId = await createFlow(a, owner.apiKey, 'Private flow');
    for (let i = 0; i < 2; i++) {
      const listed = await b.request('GET', '/v1/flows', { apiKey: other.apiKey });
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual([]);
      expect((await b.request('GET', `/v1/flows/${flowId}`, { apiKey: other.apiKey })).status).toBe(404);
      const started = await b.request('POST', '/v1/sessions', { apiKey: other.apiKey, body: { flow_id: flowId } });
      expect(started.status).toBe(404);
      expect(started.body.error.code).toBe('flow_not_found');
    }
    expect((await b.request('GET', '/v1/flows', { apiKey: owner.apiKey })).body.map((f: { id: string }) => f.id)).toEqual([flowId]);
  });

  it('eight session starts at once over both nodes on a balance below a minute are all refused 402 and make nothing; on a minute left, all eight start', { timeout: 30_000 }, async () => {
    // Priced providers (their keys are never used: no call connects), so a minute costs 3 cents.
    const paid = { stt: { provider: 'deepgram' as const, apiKey: 'dg-server' }, llm: { provider: 'openai' as const, apiKey: 'sk-server' }, tts: { provider: 'openai' as const, apiKey: 'sk-server' } };
    const { a, b } = await nodes.start({ providers: paid });
    const account = await createAccount(a);
    const accountId = (await a.app.services.store.accounts.findByEmail(account.email))!.id;
    // Each node has served the key, so each start's key check rides on its reads.
    for (const node of [a, b]) expect((await node.request('GET', '/v1/flows', { apiKey: account.apiKey })).status).toBe(200);
    const eight = () => Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? b : a).request('POST', '/v1/sessions', { apiKey: account.apiKey, body: {} })));

    const granted = (await a.request('GET', '/v1/credits/balance', { apiKey: account.apiKey })).body.balance_usd_cents as number;
    expect((await a.app.services.store.credits.debit(accountId, granted - 1, { idempotencyKey: 'drain' })).ok).toBe(true);
    const low = await eight();
    expect(low.map((response) => [response.status, response.body.error?.code])).toEqual(Array.from({ length: 8 }, () => [402, 'insufficient_credits']));
    expect((await b.request('GET', '/v1/sessions', { jwt: account.jwt })).body).toEqual([]);

    await a.app.services.store.credits.grant(accountId, 2, 'test top-up', 'a-minute');
    const enough = await eight();
    expect(enough.map((response) => response.status)).toEqual(Array.from({ length: 8 }, () => 200));
    expect(enough.map((response) => response.body.credits_remaining)).toEqual(Array.from({ length: 8 }, () => 3));
  });
});
