import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolRequestSender } from '../../server/engine/tools/tool-requests.ts';
import type { ToolRequestInput } from '../../server/engine/http-tools.ts';
import { verifyWebhook } from '../../server/security/webhook-signature.ts';
import { secretContext } from '../../server/security/secret-box.ts';
import { startAvailabilityService, type AvailabilityService } from '../support/availability-service.ts';
import { createAccount, startTestServer, type TestServer } from '../support/server.ts';

// How a flow's http tool request goes out (docs/flows.md#extended-flow-keys): signed with the
// account's tool_signing_secret, `{secret.NAME}` filled from its stored secrets, refused to the
// server's own network unless allowed, and every failure an error result rather than a throw.
const SIGNING = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

describe('flow http tool requests', () => {
  let server: TestServer;
  let service: AvailabilityService;
  let accountId: string;
  let bareAccountId: string;

  beforeAll(async () => {
    server = await startTestServer();
    service = await startAvailabilityService({
      monday: { status: 200, json: { slot: '9:00' } },
      huge: { status: 200, json: { filler: 'x'.repeat(5_000) } },
    });
    const { store, secrets } = server.app.services;
    const account = await createAccount(server);
    accountId = (await store.accounts.findByEmail(account.email))!.id;
    await store.secrets.put(accountId, 'tool_signing_secret', secrets.seal(SIGNING, secretContext(accountId, 'tool_signing_secret')));
    await store.secrets.put(accountId, 'crm', secrets.seal('crm-secret-value', secretContext(accountId, 'crm')));
    const bare = await createAccount(server);
    bareAccountId = (await store.accounts.findByEmail(bare.email))!.id;
  });
  afterAll(async () => {
    await service?.close();
    await server?.close();
  });

  const sender = (allowPrivate: boolean, maxAnswerBytes?: number) =>
    createToolRequestSender({ secrets: server.app.services.store.secrets, box: server.app.services.secrets, allowPrivate, maxAnswerBytes });
  const input = (overrides: Partial<ToolRequestInput> = {}): ToolRequestInput => ({
    accountId,
    url: service.url,
    method: 'PUT',
    headers: { Authorization: 'Bearer {secret.crm}', 'X-Flow': 'booking' },
    body: JSON.stringify({ tool: 'check', arguments: { day: 'monday' } }),
    timeoutMs: 3_000,
    signal: new AbortController().signal,
    ...overrides,
  });

  it('sends the body signed with the account secret, with the header secret filled in, and returns the JSON answer', async () => {
    const before = service.received.length;
    const result = await sender(true)(input());
    expect(result).toMatchObject({ ok: true, status: 200, body: { slot: '9:00' } });
    const [request] = service.received.slice(before);
    expect(request!.method).toBe('PUT');
    expect(request!.headers.authorization).toBe('Bearer crm-secret-value');
    expect(request!.headers['x-flow']).toBe('booking');
    const headers = { 'webhook-id': String(request!.headers['webhook-id']), 'webhook-timestamp': String(request!.headers['webhook-timestamp']), 'webhook-signature': String(request!.headers['webhook-signature']) };
    expect(verifyWebhook(SIGNING, headers, request!.body)).toBe(true);
    expect(verifyWebhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, headers, request!.body)).toBe(false);
  });

  it('sends nothing, and says which secret to set, when the account lacks the signing secret or a named one', async () => {
    const before = service.received.length;
    const unsigned = await sender(true)(input({ accountId: bareAccountId, headers: {} }));
    expect(unsigned).toMatchObject({ ok: false, status: null });
    expect(!unsigned.ok && unsigned.error).toContain('PUT /v1/secrets/tool_signing_secret');
    const missing = await sender(true)(input({ headers: { 'X-Key': '{secret.not_set}' } }));
    expect(!missing.ok && missing.error).toContain('not_set');
    expect(service.received.length).toBe(before);
  });

  it('refuses the server\'s own network unless private targets are allowed', async () => {
    const before = service.received.length;
    const refused = await sender(false)(input());
    expect(!refused.ok && refused.error).toContain("server's own network");
    expect(service.received.length).toBe(before);
  });

  it('gives an error result for an answer over the size limit, and for a refused connection', async () => {
    const large = await sender(true, 1_024)(input({ body: JSON.stringify({ tool: 'check', arguments: { day: 'huge' } }) }));
    expect(!large.ok && large.error).toContain('larger than 1 KiB');
    const closed = await sender(true)(input({ url: 'http://127.0.0.1:9/nothing' }));
    expect(closed).toMatchObject({ ok: false, error: 'connection refused' });
  });
});
