// Tokens, accounts, keys and secrets with two nodes on one PostgreSQL
// (docs/hosting.md#several-nodes-on-postgresql): a session token handed to both nodes at once
// connects once; a node's start ends no call another node may hold; one email signed up on both at
// once makes one account; a key revoked on one node stops working on the other at once; a new
// secret put on both at once is reported new once; settings saved on both at once keep both
// changes.
import { describe, expect, it } from 'vitest';
import { EmailTakenError } from '../../../server/store/errors.ts';
import { postgresNodesForThisFile } from './postgres-nodes.ts';

const nodes = postgresNodesForThisFile();
const T0 = 1_700_000_000;

describe('two nodes sharing sessions, accounts, keys and secrets', () => {
  it('connects a token exactly once when 20 connections reach the two nodes at the same moment, again and again', async () => {
    const [a, b] = await nodes.twoNodes({ now: () => T0 });
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    for (let round = 0; round < 10; round++) {
      const tokenHash = `token-${round}`;
      const session = await a.sessions.create({
        accountId: account.id,
        flowId: null,
        tokenHash,
        tokenPrefix: tokenHash,
        transport: 'websocket',
        mode: 'assistant',
        context: {},
        metadata: {},
        expiresAt: T0 + 600,
      });
      const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).sessions.claim(tokenHash, T0 + 1)));
      const winners = claims.filter((claim) => claim !== null);
      expect(winners).toHaveLength(1);
      expect(winners[0]).toEqual({ ...session, status: 'connected', startedAt: T0 + 1 });
    }
    expect((await b.sessions.listRecent(account.id)).filter((session) => session.status === 'connected')).toHaveLength(10);
  });

  it('ends no call when a node starts: the connected sessions may be live on the other node', async () => {
    const [a, b] = await nodes.twoNodes({ now: () => T0 });
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    const live = await b.sessions.createConnected({ accountId: account.id, flowId: null, transport: 'websocket', mode: 'assistant', context: {}, metadata: {} });
    expect(await a.sessions.endInterrupted()).toEqual([]);
    expect(await a.sessions.findById(live.id)).toEqual(live);
  });

  it('makes one account of one email signed up on both nodes at once, in any letter case', async () => {
    const [a, b] = await nodes.twoNodes();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).accounts.create({ email: i % 2 === 0 ? 'ada@example.com' : 'ADA@example.com', passwordHash: 'h' })),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    for (const outcome of outcomes.filter((o) => o.status === 'rejected')) {
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(EmailTakenError);
    }
    expect(await b.accounts.findByEmail('Ada@Example.com')).not.toBeNull();
  });

  it('stops a key on the other node the moment it is revoked, with its unclaimed tokens', async () => {
    const [a, b] = await nodes.twoNodes({ now: () => T0 });
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    const key = await a.apiKeys.create({ accountId: account.id, label: 'ci', prefix: 'vfk_aaaaaaaa', keyHash: 'h-1' });
    expect(await b.apiKeys.findActiveByHash('h-1')).toEqual(key); // node B has looked the key up once
    await b.sessions.create({
      accountId: account.id,
      flowId: null,
      tokenHash: 'token-by-key',
      tokenPrefix: 'token-by-key',
      transport: 'websocket',
      mode: 'assistant',
      context: {},
      metadata: {},
      expiresAt: T0 + 600,
      apiKeyId: key.id,
    });

    expect(await a.apiKeys.revoke(account.id, key.id)).toBe(true);
    expect(await b.apiKeys.findActiveByHash('h-1')).toBeNull();
    expect(await b.apiKeys.listByAccount(account.id)).toEqual([]);
    expect(await b.sessions.claim('token-by-key', T0 + 1)).toBeNull();
    expect(await b.apiKeys.revoke(account.id, key.id)).toBe(false);
  });

  it('reports a new secret put on both nodes at once as new only once', async () => {
    const [a, b] = await nodes.twoNodes();
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    for (let round = 0; round < 10; round++) {
      const name = `TOKEN_${round}`;
      const results = await Promise.all([a.secrets.put(account.id, name, 'sealed-a'), b.secrets.put(account.id, name, 'sealed-b')]);
      expect(results.filter((result) => result.created)).toHaveLength(1);
    }
    expect((await b.secrets.list(account.id)).map((secret) => secret.name)).toEqual(Array.from({ length: 10 }, (_, i) => `TOKEN_${i}`));
  });

  it('keeps both changes when two nodes save different provider settings at once', async () => {
    const [a, b] = await nodes.twoNodes();
    const account = await a.accounts.create({ email: 'ada@example.com', passwordHash: 'h' });
    await Promise.all([
      a.providers.update(account.id, { sttProvider: 'deepgram', sttKeyEnc: 'enc-stt' }),
      b.providers.update(account.id, { llmProvider: 'openai', llmModel: 'gpt-4o-mini' }),
    ]);
    expect(await a.providers.get(account.id)).toMatchObject({ sttProvider: 'deepgram', sttKeyEnc: 'enc-stt', llmProvider: 'openai', llmModel: 'gpt-4o-mini' });
  });
});
