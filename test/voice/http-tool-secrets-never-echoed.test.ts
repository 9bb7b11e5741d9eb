import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { createFlow } from '../support/server.ts';
import { chatRequests, useVoiceRig } from '../support/voice-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

// A flow's http tool sends the account's secrets in its headers; a service that echoes the request
// back (a debugging endpoint, an error page printing the headers) must not put them where they
// are kept and shown: the live events, the session's detail and timeline, its webhooks, the
// model's context. Each form a receiver would plausibly echo is checked: as is, URL-encoded,
// base64, and what a Basic credential decodes to.
const SIGNING_SECRET = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
const API_KEY = 'k3y/with+special=chars&more';
const PASSWORD = 'pa55/word+x!';
const BASIC = Buffer.from(`shop:${PASSWORD}`).toString('base64');

const LEAKS = [API_KEY, encodeURIComponent(API_KEY), Buffer.from(API_KEY).toString('base64').replace(/=+$/, ''), BASIC, `shop:${PASSWORD}`, PASSWORD, encodeURIComponent(PASSWORD)];

const flowYaml = (url: string) => `id: echo
version: "1.0.0"
initial_state: start
settings:
  base_system_prompt: You look up orders.
states:
  start:
    agent:
      prompt: Look the order up with lookup_order.
      tools: [lookup_order]
    tools:
      lookup_order:
        description: Look an order up.
        parameters:
          day: { type: string, required: true, description: "Which answer." }
        http:
          url: ${url}
          headers: { X-Api-Key: "{secret.api_key}", Authorization: "Basic {secret.crm_basic}" }
`;

/** Echoes what it was sent, the secrets first: 500 as text for `fail`, 200 as JSON for `ok`. */
async function startEchoService(): Promise<{ url: string; calls: number; close: () => Promise<void> }> {
  const state = { calls: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      state.calls++;
      const key = String(req.headers['x-api-key']);
      const auth = String(req.headers.authorization);
      const decoded = Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString('utf8');
      const echo = `key=${key} encoded=${encodeURIComponent(key)} b64=${Buffer.from(key).toString('base64')} auth=${auth} user=${decoded} pass=${encodeURIComponent(decoded.split(':')[1] ?? '')}`;
      const day = JSON.parse(Buffer.concat(chunks).toString('utf8')).arguments.day;
      if (day === 'fail') res.writeHead(500, { 'content-type': 'text/plain' }).end(`bad credentials: ${echo}`);
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ echo, headers: req.headers, [key]: 'as a key too' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`,
    get calls() {
      return state.calls;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('an http tool whose service echoes the request', () => {
  let service: Awaited<ReturnType<typeof startEchoService>>;
  let receiver: WebhookReceiver;
  let flowId: string;
  const rig = useVoiceRig({
    tts: 'openai',
    openai: { msPerWord: 20 },
    config: { webhooks: { allowPrivate: true } },
    rules: [
      { when: { lastRole: 'none', toolsOffered: ['lookup_order'] }, respond: { text: 'Which order?' } },
      { when: { lastRole: 'user', lastUserText: /broken/i, toolsOffered: ['lookup_order'] }, respond: { toolCalls: [{ name: 'lookup_order', arguments: { day: 'fail' } }] } },
      { when: { lastRole: 'user', lastUserText: /working/i, toolsOffered: ['lookup_order'] }, respond: { toolCalls: [{ name: 'lookup_order', arguments: { day: 'ok' } }] } },
      { when: { lastRole: 'tool' }, respond: { text: 'Noted.' } },
    ],
  });

  beforeAll(async () => {
    [service, receiver] = await Promise.all([startEchoService(), startWebhookReceiver()]);
    const yaml = flowYaml(service.url);
    expect(parseFlow(yaml).diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    flowId = await createFlow(rig.server, rig.account.apiKey, 'Echo', yaml);
    for (const [name, value] of [['tool_signing_secret', SIGNING_SECRET], ['api_key', API_KEY], ['crm_basic', BASIC]]) {
      expect((await rig.server.request('PUT', `/v1/secrets/${name}`, { jwt: rig.account.jwt, body: { value } })).status).toBe(201);
    }
    expect((await rig.server.request('POST', '/v1/webhooks', { apiKey: rig.account.apiKey, body: { url: receiver.url } })).status).toBe(201);
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
  });

  it('keeps no form of the secrets in the live events, the session detail and timeline, its webhooks or the model’s context', { timeout: 60_000 }, async () => {
    const client = await rig.connect({ flow_id: flowId });
    const started = await client.waitFor('session_started', undefined, 15_000);
    await client.waitFor('agent_stopped_speaking', undefined, 15_000);

    client.send({ type: 'text', text: 'The broken one.' });
    const failed = await client.waitFor('tool_result', (e) => e.name === 'lookup_order', 15_000);
    expect(failed).toMatchObject({ ok: false, http_status: 500 });
    // The echo arrived, its secrets replaced: what is left says what the receiver said.
    expect(JSON.stringify(failed)).toContain('bad credentials: key=[redacted]');
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Noted.', 15_000);

    client.send({ type: 'text', text: 'The working one.' });
    const answered = await client.waitFor('tool_result', (e) => e.name === 'lookup_order' && e.ok === true, 15_000);
    expect(JSON.stringify(answered)).toContain('[redacted]');
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Noted.' && client.events.indexOf(e) > client.events.indexOf(answered), 15_000);
    client.send({ type: 'end' });
    await client.waitFor('session_ended', undefined, 15_000);
    expect(service.calls).toBe(2);

    const id = started.session_id;
    await receiver.waitFor((r) => r.json?.type === 'session.ended' && r.json.data.session_id === id, 15_000, 'session.ended');
    const detail = await rig.server.request('GET', `/v1/sessions/${id}`, { apiKey: rig.account.apiKey });
    const timeline = await rig.server.request('GET', `/v1/sessions/${id}/events`, { apiKey: rig.account.apiKey });
    expect(detail.status).toBe(200);
    expect(timeline.status).toBe(200);
    const kept = {
      'live events': JSON.stringify(client.events),
      'session detail': detail.text,
      timeline: timeline.text,
      webhooks: receiver.received.map((r) => r.body).join('\n'),
      "the model's context": JSON.stringify(chatRequests(rig)),
    };
    for (const [where, text] of Object.entries(kept)) {
      expect(text, where).toContain('[redacted]');
      for (const leak of LEAKS) expect(text.includes(leak), `${where} holds ${leak}`).toBe(false);
    }
  });
});
