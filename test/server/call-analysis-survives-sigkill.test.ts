// A call's analysis (docs/api.md#outcome-and-success) is a durable job: the server is killed
// (SIGKILL, no goodbye) while the model is still working out the call's outcome, and once it runs
// again on the same data folder the analysis is finished, stored, and session.analyzed is sent.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server.ts';
import { spawnServer, type ServerProcess } from '../support/spawn-server.ts';
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const FLOW = `id: callback
version: "1.0.0"
initial_state: ask
settings:
  outcome:
    booked: { type: boolean, required: true }
    callback: { type: string, description: The number to call back }
  success:
    - outcome: booked == true
states:
  ask:
    respond: false
    agent: { prompt: Ask for a time., tools: [book] }
    tools:
      book: { description: Book it., parameters: { booked: { type: boolean, required: true } } }
    transitions: { on_tool_call: { book: done } }
  done:
    respond: false
    agent: { prompt: Say goodbye. }
`;

async function json(url: string, init: RequestInit = {}) {
  const response = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...init.headers } });
  return { status: response.status, body: (await response.json().catch(() => null)) as any };
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms; last seen ${JSON.stringify(value).slice(0, 1500)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a call analysis across a SIGKILL', () => {
  let server: ServerProcess | null = null;
  let receiver: WebhookReceiver | null = null;
  let openai: FakeOpenAI | null = null;
  let dataDir = '';
  afterEach(async () => {
    server?.child.kill('SIGKILL');
    await server?.exited;
    await receiver?.close();
    await openai?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    server = receiver = openai = null;
  });

  it('is finished after the restart, and session.analyzed is sent', { timeout: 120_000 }, async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'voxflow-analysis-crash-'));
    openai = await startFakeOpenAI({ rules: [{ when: { jsonSchemaName: 'call_outcome' }, respond: { hangMs: 120_000 } }] });
    receiver = await startWebhookReceiver();
    const env = { VOXFLOW_LLM_PROVIDER: 'openai', VOXFLOW_LLM_API_KEY: 'sk-test', VOXFLOW_LLM_BASE_URL: openai.url };
    const args = ['--data-dir', dataDir, '--allow-private-webhooks', '--webhook-retry-seconds', '1,1,1,1,1'];
    server = await spawnServer(args, env);

    const signup = await json(`${server.url}/auth/signup`, { method: 'POST', body: JSON.stringify({ email: `analysis${Date.now()}@example.com`, password: 'long enough password' }) });
    const jwt = signup.body.access_token as string;
    const auth = { authorization: `Bearer ${jwt}` };
    const flow = await json(`${server.url}/v1/flows`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Callback', yaml_content: FLOW }) });
    expect(flow.status, JSON.stringify(flow.body)).toBe(201);
    const hook = await json(`${server.url}/v1/webhooks`, { method: 'POST', headers: auth, body: JSON.stringify({ url: receiver.url, events: ['session.analyzed'] }) });
    expect(hook.status).toBe(201);

    const client = await connectVoice(wsUrl(server.url, `/ws?mode=flow&program_id=${flow.body.id}&access_token=${jwt}`));
    const sessionId = (await client.waitFor('session_started', undefined, 15_000)).session_id as string;
    await client.waitFor('flow_state');
    client.send({ type: 'simulate_tool', name: 'book', arguments: { booked: true } });
    await client.waitFor('flow_state', (e) => e.state === 'done');
    client.send({ type: 'end' });
    await client.waitFor('session_ended');
    await client.closed;

    // The model is asked for the callback number and never answers: the server dies mid-analysis.
    await until('the analysis asking the model', async () => openai!.requests.filter((r) => (r.body as any)?.response_format?.json_schema?.name === 'call_outcome').length, (n) => n >= 1);
    const pending = await json(`${server.url}/v1/sessions/${sessionId}`, { headers: auth });
    expect(pending.body).toMatchObject({ status: 'ended', analysis_status: 'pending', outcome: null, success: null });
    server.child.kill('SIGKILL');
    expect((await server.exited).signal).toBe('SIGKILL');
    expect(receiver.received).toEqual([]);

    openai.setRules([{ when: { jsonSchemaName: 'call_outcome' }, respond: { json: { callback: '+15550002222' } } }]);
    server = await spawnServer(args, env);
    const analyzed = await receiver.waitFor((r) => r.json?.type === 'session.analyzed' && r.json.data.session_id === sessionId, 30_000, 'session.analyzed after the restart');
    new Webhook(hook.body.secret).verify(analyzed.body, { 'webhook-id': analyzed.id, 'webhook-timestamp': analyzed.timestamp, 'webhook-signature': analyzed.signature });
    expect(analyzed.json.data).toMatchObject({ outcome: { values: { booked: true, callback: '+15550002222' } }, success: { value: true } });
    const detail = await until('the stored analysis', async () => (await json(`${server!.url}/v1/sessions/${sessionId}`, { headers: auth })).body, (body) => body.analysis_status === 'done');
    expect(detail.outcome.fields.callback).toEqual({ value: '+15550002222', source: 'model', status: 'known' });
    expect(receiver.received.filter((r) => r.json?.type === 'session.analyzed')).toHaveLength(1);
  });
});
