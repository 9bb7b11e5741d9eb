import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolRequestSender } from '../../server/engine/tools/tool-requests.ts';
import { sendWebhook } from '../../server/outcomes/webhooks/sender.ts';
import { outboundAddressProblem, outboundTargetProblem } from '../../server/security/outbound-target.ts';
import { secretContext } from '../../server/security/secret-box.ts';
import { afterThisTest } from '../support/after-this-test.ts';
import { createAccount, startTestServer, type TestServer } from '../support/server.ts';

// Where the server may be sent by an account (docs/hosting.md#outbound-requests): only globally
// routable unicast addresses, never one of this host's own, whatever its range, and the
// private-networks opt-in (--allow-private-webhooks) adds loopback and private networks but
// never this host's own other addresses.

const SIGNING = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
const CRM_SECRET = 'crm-secret-never-sent-home';

/** One of this machine's own non-loopback addresses, as a URL host ([…] for IPv6). */
function ownNonLoopbackHost(): string {
  const entries = Object.values(networkInterfaces()).flatMap((list) => list ?? []);
  const pick = entries.find((e) => !e.internal && e.family === 'IPv4') ?? entries.find((e) => !e.internal && e.family === 'IPv6' && !e.address.startsWith('fe80'));
  expect(pick, 'this test needs a non-loopback interface address (os.networkInterfaces())').toBeDefined();
  return pick!.family === 'IPv6' ? `[${pick!.address}]` : pick!.address;
}

/** A service on every interface (0.0.0.0 and ::) that records what reaches it and answers 200. */
async function startServiceOnAllInterfaces(): Promise<{ port: number; received: IncomingHttpHeaders[]; close: () => Promise<void> }> {
  const received: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    received.push(req.headers);
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"internal":"admin data"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('the outbound address classifier', () => {
  const none = new Set<string>();
  const strict = { allowPrivate: false };
  const optIn = { allowPrivate: true };

  it('refuses every special-purpose range, with or without the private-networks opt-in, naming it', () => {
    const special = [
      '192.0.2.10', // documentation (TEST-NET-1)
      '198.51.100.7', // documentation (TEST-NET-2)
      '203.0.113.200', // documentation (TEST-NET-3)
      '198.18.0.1', // benchmarking
      '198.19.255.254',
      '192.0.0.8', // IETF protocol assignments
      '169.254.169.254', // link-local: cloud metadata
      '224.0.0.251', // multicast
      '239.255.255.250',
      '240.0.0.1', // reserved
      '255.255.255.255', // broadcast
      '0.0.0.0', // unspecified, which reaches this host
      '0.1.2.3',
      '::', // unspecified
      '::127.0.0.1', // IPv4-compatible
      '::8.8.8.8',
      '::7f00:1', // the same, as URLs write it
      '64:ff9b::808:808', // NAT64
      '64:ff9b::7f00:1',
      'fe80::1', // link-local
      'ff02::1', // multicast
      '2001:db8::1', // documentation
      '2002:7f00:1::1', // 6to4
      '2001:0:4136:e378::1', // Teredo
      '::ffff:169.254.169.254', // IPv4-mapped link-local
      '::ffff:192.0.2.1',
    ];
    for (const address of special) {
      for (const policy of [strict, optIn]) {
        const problem = outboundAddressProblem(address, policy, none);
        expect(problem, `${address} allowPrivate=${policy.allowPrivate}`).toMatch(/not a public internet address \(.+\)/);
        expect(problem).toContain(address);
      }
    }
  });

  it('refuses loopback, private networks and shared address space unless the operator opted in', () => {
    for (const address of ['127.0.0.1', '127.8.9.10', '::1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.20', '100.64.0.1', '100.127.255.254', 'fd00::2', 'fc00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1']) {
      expect(outboundAddressProblem(address, strict, none), address).toMatch(/server's own network/);
      expect(outboundAddressProblem(address, optIn, none), address).toBeNull();
    }
  });

  it('allows globally routable unicast, and refuses this host’s own addresses whatever their range, opt-in or not', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8', '172.32.0.1', '100.128.0.1']) {
      expect(outboundAddressProblem(address, strict, none), address).toBeNull();
    }
    // This host's addresses as os.networkInterfaces() gives them (the public one first).
    const own = new Set(['93.184.216.34', 'fd00:0:0:0:0:0:0:2', '10.0.0.5']);
    for (const address of ['93.184.216.34', '::ffff:93.184.216.34', 'fd00::2', '10.0.0.5']) {
      for (const policy of [strict, optIn]) {
        expect(outboundAddressProblem(address, policy, own), `${address} allowPrivate=${policy.allowPrivate}`).toBe(`${address} is one of this server's own addresses`);
      }
    }
    // Loopback stays the opted-in deployment's way to its own host.
    expect(outboundAddressProblem('127.0.0.1', optIn, own)).toBeNull();
  });

  it('checks a URL by every address its name resolves to', async () => {
    expect(await outboundTargetProblem('http://localhost:9/x', strict)).toMatch(/^localhost resolves to (127\.0\.0\.1|::1), an address of the server's own network \(loopback\)$/);
    expect(await outboundTargetProblem('http://[::ffff:a9fe:a9fe]/latest', optIn)).toMatch(/not a public internet address \(link-local/);
    expect(await outboundTargetProblem(`http://${ownNonLoopbackHost()}:9/x`, optIn)).toMatch(/one of this server's own addresses/);
  });
});

describe("a service listening on every interface, reached through this host's own non-loopback address", () => {
  let service: Awaited<ReturnType<typeof startServiceOnAllInterfaces>>;
  let hosted: TestServer;
  let accountId: string;
  let ownUrl: string;

  beforeAll(async () => {
    [service, hosted] = await Promise.all([startServiceOnAllInterfaces(), startTestServer()]);
    ownUrl = `http://${ownNonLoopbackHost()}:${service.port}/admin`;
    const { store, secrets } = hosted.app.services;
    const account = await createAccount(hosted);
    accountId = (await store.accounts.findByEmail(account.email))!.id;
    await store.secrets.put(accountId, 'tool_signing_secret', secrets.seal(SIGNING, secretContext(accountId, 'tool_signing_secret')));
    await store.secrets.put(accountId, 'crm', secrets.seal(CRM_SECRET, secretContext(accountId, 'crm')));
  });
  afterAll(async () => {
    await service?.close();
    await hosted?.close();
  });

  it('is refused to a flow http tool, opt-in or not: the call fails saying why and the secret header never arrives', async () => {
    // The same service over loopback, where the opt-in allows it, does get the request: the
    // refusal below is about the address, not a service that cannot be reached.
    const sender = (allowPrivate: boolean) => createToolRequestSender({ secrets: hosted.app.services.store.secrets, box: hosted.app.services.secrets, allowPrivate });
    const call = (allowPrivate: boolean, url: string) =>
      sender(allowPrivate)({ accountId, url, method: 'POST', headers: { Authorization: 'Bearer {secret.crm}' }, body: '{}', timeoutMs: 5_000, signal: new AbortController().signal });
    const viaLoopback = await call(true, `http://127.0.0.1:${service.port}/admin`);
    expect(viaLoopback).toMatchObject({ ok: true, status: 200 });
    expect(service.received.at(-1)!.authorization).toBe(`Bearer ${CRM_SECRET}`);
    const before = service.received.length;

    for (const allowPrivate of [false, true]) {
      const refused = await call(allowPrivate, ownUrl);
      expect(refused.ok, `allowPrivate=${allowPrivate}`).toBe(false);
      expect(!refused.ok && refused.error).toMatch(/one of this server's own addresses|not a public internet address/);
      expect(refused.status).toBeNull();
    }
    expect(service.received.length).toBe(before);
  });

  it('is refused as a webhook endpoint when saved (422, naming the address), and when delivered', async () => {
    const account = await createAccount(hosted);
    const saved = await hosted.request('POST', '/v1/webhooks', { apiKey: account.apiKey, body: { url: ownUrl } });
    expect(saved.status).toBe(422);
    expect(saved.body.error.code).toBe('webhook_target_not_allowed');
    expect(saved.body.error.details[0]).toMatchObject({ field: 'url' });
    expect(saved.body.error.details[0].message).toContain(new URL(ownUrl).hostname.replace(/^\[|\]$/g, ''));

    // A server whose operator allows private networks refuses it too.
    const local = await startTestServer({ webhooks: { allowPrivate: true } });
    afterThisTest(() => local.close());
    const localAccount = await createAccount(local);
    const alsoRefused = await local.request('POST', '/v1/webhooks', { apiKey: localAccount.apiKey, body: { url: ownUrl } });
    expect(alsoRefused.status).toBe(422);
    expect(alsoRefused.body.error.code).toBe('webhook_target_not_allowed');
    // …while a receiver on loopback is still fine there.
    expect((await local.request('POST', '/v1/webhooks', { apiKey: localAccount.apiKey, body: { url: `http://127.0.0.1:${service.port}/hooks` } })).status).toBe(201);

    const before = service.received.length;
    for (const allowPrivate of [false, true]) {
      const attempt = await sendWebhook(ownUrl, '{}', { 'x-test': 'delivery' }, { timeoutMs: 5_000, allowPrivate });
      expect(attempt, `allowPrivate=${allowPrivate}`).toMatchObject({ delivered: false, statusCode: null });
      expect(attempt.error).toMatch(/one of this server's own addresses|not a public internet address/);
    }
    expect(service.received.length).toBe(before);
  });
});
