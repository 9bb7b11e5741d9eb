// Which node holds a voice session, and the per-account session cap, with two nodes on one
// PostgreSQL (docs/hosting.md#several-nodes-on-postgresql): a node whose heartbeat stopped has its
// connected sessions ended by whichever node sweeps first (once, server_restarted, charged what the
// ledger holds), a node that stopped cleanly at once; a live node's sessions are never touched. The
// cap counts every node's connected sessions, so connects racing on both nodes never overshoot it.
// A running node's presence (server/cluster/node-presence.ts) beats and sweeps on its timers. The
// clock is injected (and the presence's intervals faked): a minute of silence takes no minute here.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startNodePresence, SWEEP_SECS } from '../../../server/cluster/node-presence.ts';
import { SessionCapReachedError } from '../../../server/store/errors.ts';
import { NODE_GONE_AFTER_SECS, NODE_HEARTBEAT_SECS } from '../../../server/store/repositories/nodes.ts';
import { openPostgresStore, type PostgresStore } from '../../../server/store/postgres/store.ts';
import { openStore } from '../../../server/store/sqljs/store.ts';
import { closeAfterTest, tempDataDir } from '../helpers.ts';
import { postgresNodesForThisFile } from './postgres-nodes.ts';

const nodes = postgresNodesForThisFile();
const T0 = 1_700_000_000;

/** Two nodes on one new database, on one clock the test moves. */
async function twoNodes(sessionsPerAccount = 0): Promise<{ a: PostgresStore; b: PostgresStore; clock: { t: number } }> {
  const url = await nodes.database();
  const clock = { t: T0 };
  const now = () => clock.t;
  const [a, b] = await Promise.all([0, 1].map(() => openPostgresStore({ url, poolSize: 5, now, sessionsPerAccount })));
  return { a: closeAfterTest(a!), b: closeAfterTest(b!), clock };
}

const connectedOn = (store: PostgresStore, accountId: string) =>
  store.sessions.createConnected({ accountId, flowId: null, transport: 'websocket', mode: 'assistant', context: {}, metadata: {} });

function tokenOn(store: PostgresStore, accountId: string, tokenHash: string, expiresAt: number) {
  return store.sessions.create({ accountId, flowId: null, tokenHash, tokenPrefix: tokenHash.slice(0, 8), transport: 'websocket', mode: 'assistant', context: {}, metadata: {}, expiresAt });
}

describe('the node that holds a session', () => {
  it('each node has its own id, and a session says which node connected it', async () => {
    const { a, b } = await twoNodes();
    expect(a.nodes.self).toMatch(/^node_[A-Za-z0-9_-]{8}$/);
    expect(b.nodes.self).not.toBe(a.nodes.self);
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    const routed = await connectedOn(a, account.id);
    await tokenOn(a, account.id, 'tok-1', T0 + 600);
    const claimed = await b.sessions.claim('tok-1', T0 + 1);
    const rows = await a.pg.rows<{ id: string; node_id: string | null }>('SELECT id, node_id FROM sessions ORDER BY rowid');
    expect(rows).toEqual([
      { id: routed.id, node_id: a.nodes.self },
      { id: claimed!.id, node_id: b.nodes.self },
    ]);
  });

  it("ends a silent node's connected sessions once it has missed a minute of heartbeats, and never a live node's", async () => {
    const { a, b, clock } = await twoNodes();
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    await a.credits.grant(account.id, 1000, 'grant', 'g1');
    const onA = await connectedOn(a, account.id);
    const onB = await connectedOn(b, account.id);
    await a.credits.debit(account.id, 7, { idempotencyKey: `m1-${onA.id}`, sessionId: onA.id });
    await a.timelines.append(onA.id, [{ seq: 1, at: T0 + 42, type: 'user_transcript', data: '{}' }], { events: 1, bytes: 2, dropped: 0 });

    // A stops beating (it was killed); B goes on.
    clock.t = T0 + NODE_GONE_AFTER_SECS - 1;
    await b.nodes.beat();
    expect(await b.sessions.endInterrupted()).toEqual([]);
    clock.t = T0 + NODE_GONE_AFTER_SECS + 1;
    // Both nodes sweep at the same moment (A's own sweep too: it cannot tell it is the one gone).
    const [byA, byB] = await Promise.all([a.sessions.endInterrupted(), b.sessions.endInterrupted()]);
    expect([...byA, ...byB]).toEqual([onA.id]);
    expect(await b.sessions.findById(onA.id)).toMatchObject({ status: 'ended', endReason: 'server_restarted', endedAt: T0 + 42, durationSecs: 42, creditsChargedCents: 7 });
    expect(await a.sessions.findById(onB.id)).toMatchObject({ status: 'connected' });
    expect(await b.sessions.endInterrupted()).toEqual([]);
  });

  it("a node that stops cleanly takes its row with it: what it left connected ends at the other's next sweep", async () => {
    const { a, b } = await twoNodes();
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    const left = await connectedOn(a, account.id);
    expect(await b.sessions.endInterrupted()).toEqual([]);
    await a.close();
    expect(await b.pg.rows('SELECT id FROM nodes')).toEqual([{ id: b.nodes.self }]);
    expect(await b.sessions.endInterrupted()).toEqual([left.id]);
  });
});

/**
 * Counts the sweeps a store has finished. The presence queues its beat and its sweep on timers that
 * fire together every 30 s, and the sweep's statements run after the beat's: a test that waited only
 * for the beat and then moved the clock on could have the sweep still in progress read the new time
 * (ending a node's calls one sweep early). Waiting for the count closes that.
 */
function countSweeps(store: PostgresStore): { done: () => number } {
  let done = 0;
  const endInterrupted = store.sessions.endInterrupted.bind(store.sessions);
  store.sessions.endInterrupted = async () => {
    try {
      return await endInterrupted();
    } finally {
      done += 1;
    }
  };
  return { done: () => done };
}

describe("a running node's presence", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('beats every 10 s and, every 30 s, ends what a gone node left and hands those ids on (to the webhooks), on the node that ended them', async () => {
    const { a, b, clock } = await twoNodes();
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    const left = await connectedOn(a, account.id);
    const kept = await connectedOn(b, account.id);
    const sweeps = countSweeps(b);
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const handed: string[][] = [];
    const warnings: string[] = [];
    const presence = startNodePresence(b, { warn: (_details, message) => warnings.push(message) }, (ids) => handed.push(ids));
    try {
      // B lives on; A went silent at T0. The sweep at 30 s finds A quiet for only 30 s.
      for (let at = NODE_HEARTBEAT_SECS; at < 2 * SWEEP_SECS; at += NODE_HEARTBEAT_SECS) {
        clock.t = T0 + at;
        await vi.advanceTimersByTimeAsync(NODE_HEARTBEAT_SECS * 1000);
        await expect.poll(async () => (await b.pg.row<{ at: number }>('SELECT last_seen_at AS at FROM nodes WHERE id = $1', [b.nodes.self]))?.at).toBe(T0 + at);
        await expect.poll(sweeps.done).toBe(Math.floor(at / SWEEP_SECS));
      }
      expect(handed).toEqual([]);
      expect(await b.sessions.findById(left.id)).toMatchObject({ status: 'connected' });
      // The sweep at 60 s: A has missed a minute of heartbeats.
      clock.t = T0 + NODE_GONE_AFTER_SECS + 1;
      await vi.advanceTimersByTimeAsync(NODE_HEARTBEAT_SECS * 1000);
      await expect.poll(() => handed).toEqual([[left.id]]);
      expect(warnings).toEqual(['ended the sessions of a node that stopped answering (end_reason server_restarted)']);
      expect(await b.sessions.findById(kept.id)).toMatchObject({ status: 'connected' });
    } finally {
      await presence.stop();
    }
  });

  it("removes a killed node's row at the sweep after the one that ended its sessions, and never a live node's; a node forgotten while only paused comes back at its next beat", async () => {
    const { a, b, clock } = await twoNodes();
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    const left = await connectedOn(a, account.id);
    await connectedOn(b, account.id);
    const nodeIds = async () => (await b.pg.rows<{ id: string }>('SELECT id FROM nodes ORDER BY id')).map((row) => row.id);
    const both = [a.nodes.self, b.nodes.self].sort();
    const sweeps = countSweeps(b);
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const handed: string[][] = [];
    const presence = startNodePresence(b, { warn: () => undefined }, (ids) => handed.push(ids));
    try {
      // A went silent at T0; B beats on. Until A is gone, both rows stay.
      const sweepAt = async (at: number) => {
        for (let t = at - SWEEP_SECS + NODE_HEARTBEAT_SECS; t <= at; t += NODE_HEARTBEAT_SECS) {
          clock.t = T0 + t;
          await vi.advanceTimersByTimeAsync(NODE_HEARTBEAT_SECS * 1000);
        }
        await expect.poll(async () => (await b.pg.row<{ at: number }>('SELECT last_seen_at AS at FROM nodes WHERE id = $1', [b.nodes.self]))?.at).toBe(T0 + at);
        await expect.poll(sweeps.done).toBe(at / SWEEP_SECS);
      };
      await sweepAt(SWEEP_SECS);
      expect(await nodeIds()).toEqual(both);
      // The sweep at 60 s ends A's call; A's row, the record of when it was last seen, stays for now.
      clock.t = T0 + NODE_GONE_AFTER_SECS;
      await sweepAt(2 * SWEEP_SECS);
      await expect.poll(() => handed).toEqual([[left.id]]);
      expect(await nodeIds()).toEqual(both);
      // The next sweep removes it: nothing of A is connected any more. B, alive, stays.
      await sweepAt(3 * SWEEP_SECS);
      await expect.poll(nodeIds).toEqual([b.nodes.self]);
      // A was only paused: its next beat writes its row again, and what it connects counts as live.
      await a.nodes.beat();
      expect(await nodeIds()).toEqual(both);
      const after = await connectedOn(a, account.id);
      expect(await b.sessions.endInterrupted()).toEqual([]);
      expect(await b.sessions.findById(after.id)).toMatchObject({ status: 'connected' });
    } finally {
      await presence.stop();
    }
  });
});

describe('the per-account session cap over two nodes', () => {
  it('cap 3: twelve connects at once over both nodes, claims and engine-router sessions mixed, connect exactly 3; the refused tokens stay good', async () => {
    const { a, b } = await twoNodes(3);
    const [greedy, other] = [await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' }), await a.accounts.create({ email: 'bob@example.com', passwordHash: 'h' })];
    for (let i = 0; i < 6; i++) await tokenOn(a, greedy.id, `tok-${i}`, T0 + 600);
    const attempts = Array.from({ length: 12 }, (_, i) => {
      const node = i % 2 === 0 ? a : b;
      return i < 6 ? node.sessions.claim(`tok-${i}`, T0 + 1) : connectedOn(node, greedy.id);
    });
    const outcomes = await Promise.allSettled(attempts);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3);
    for (const outcome of outcomes.filter((o) => o.status === 'rejected')) {
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(SessionCapReachedError);
      expect(((outcome as PromiseRejectedResult).reason as Error).message).toMatch(/already has 3 live voice sessions/);
    }
    const live = (await b.sessions.listRecent(greedy.id)).filter((s) => s.status === 'connected');
    expect(live).toHaveLength(3);
    // Another account is not affected.
    await expect(connectedOn(b, other.id)).resolves.toMatchObject({ status: 'connected' });

    // Once one ends, a token refused at the cap connects: it was not used up.
    await a.sessions.end(live[0]!.id, { endedAt: T0 + 2, reason: 'client_hangup', creditsChargedCents: 0 });
    const stillWaiting = (await a.sessions.listRecent(greedy.id)).find((s) => s.status === 'created')!;
    await expect(b.sessions.claim(stillWaiting.tokenHash!, T0 + 3)).resolves.toMatchObject({ id: stillWaiting.id, status: 'connected' });
    await expect(a.sessions.claim('tok-never-made', T0 + 3)).resolves.toBeNull();
  });

  it('one token handed to both nodes at once when the account has one place left: it connects once, and the others read it as used, not as the account full', async () => {
    const { a, b } = await twoNodes(2);
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    await connectedOn(a, account.id);
    await tokenOn(a, account.id, 'tok-last', T0 + 600);
    const claims = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).sessions.claim('tok-last', T0 + 1)));
    expect(claims.filter((c) => c.status === 'rejected')).toEqual([]);
    const values = claims.map((c) => (c as PromiseFulfilledResult<unknown>).value);
    expect(values.filter((v) => v !== null)).toHaveLength(1);
  });

  it("a gone node's sessions hold no place under the cap", async () => {
    const { a, b, clock } = await twoNodes(2);
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    await connectedOn(a, account.id);
    await connectedOn(a, account.id);
    await expect(connectedOn(b, account.id)).rejects.toBeInstanceOf(SessionCapReachedError);
    clock.t = T0 + NODE_GONE_AFTER_SECS + 1;
    await b.nodes.beat();
    await expect(connectedOn(b, account.id)).resolves.toMatchObject({ status: 'connected' });
  });

  it('the embedded store holds the same cap (one node)', async () => {
    const store = closeAfterTest(await openStore({ dataDir: await tempDataDir(), sessionsPerAccount: 2, now: () => T0 }));
    const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    await store.sessions.create({ accountId: account.id, flowId: null, tokenHash: 'tok', tokenPrefix: 'tok', transport: 'websocket', mode: 'assistant', context: {}, metadata: {}, expiresAt: T0 + 600 });
    const outcomes = await Promise.allSettled([
      store.sessions.createConnected({ accountId: account.id, flowId: null, transport: 'websocket', mode: 'assistant', context: {}, metadata: {} }),
      store.sessions.createConnected({ accountId: account.id, flowId: null, transport: 'webrtc', mode: 'assistant', context: {}, metadata: {} }),
      store.sessions.claim('tok', T0 + 1),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toBeInstanceOf(SessionCapReachedError);
    expect(await store.sessions.findByTokenHash('tok')).toMatchObject({ status: 'created' });
  });
});
