// What each call produced and whether it succeeded (docs/api.md#outcome-and-success), as a
// business reads it: GET /v1/sessions/{id}'s outcome and success, the list's success filter, and
// the session.analyzed webhook. The model is the fake OpenAI answering structured-output requests
// as the real API does; sessions are real WebSocket sessions walked with simulate_tool.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server.ts';
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

type Account = Awaited<ReturnType<typeof createAccount>>;

/** Neither state speaks on entering: the only model requests are the analysis's. */
function bookingFlow(settings: string): string {
  return `id: booking
version: "1.0.0"
initial_state: ask
settings:
${settings}
states:
  ask:
    respond: false
    agent: { prompt: Ask for a time., tools: [book] }
    tools:
      book:
        description: Book the table.
        parameters: { slot: { type: string, required: true }, booked: { type: boolean, required: true } }
    transitions: { on_tool_call: { book: confirmed } }
  confirmed:
    respond: false
    agent: { prompt: Confirm the booking. }
`;
}

const FROM_VARIABLES = bookingFlow(`  outcome:
    booked: { type: boolean, required: true }
    slot: { type: string, description: The time booked }
  success:
    - outcome: booked == true
    - reached: confirmed
    - transferred: false`);

const EXTRACTED = bookingFlow(`  llm: { model: flow-model }
  outcome:
    booked: { type: boolean, required: true }
    callback: { type: string, description: The number to call back }
    party: { type: integer, description: How many people }
  success:
    - outcome: booked == true
    - judge: The caller got a table for the time they wanted`);

/** A call: the booking made by the simulator (slot and booked become variables), then ended. */
async function playBooking(server: TestServer, account: Account, flowId: string): Promise<string> {
  const client = await connectVoice(wsUrl(server.url, `/ws?mode=flow&program_id=${flowId}&access_token=${account.jwt}`));
  const started = await client.waitFor('session_started', undefined, 15_000);
  await client.waitFor('flow_state');
  client.send({ type: 'simulate_tool', name: 'book', arguments: { slot: '7pm', booked: true } });
  await client.waitFor('flow_state', (e) => e.state === 'confirmed');
  client.send({ type: 'end' });
  await client.waitFor('session_ended');
  await client.closed;
  return started.session_id as string;
}

async function analysed(server: TestServer, account: Account, sessionId: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const detail = await server.request('GET', `/v1/sessions/${sessionId}`, { apiKey: account.apiKey });
    expect(detail.status, detail.text).toBe(200);
    if (detail.body.analysis_status === 'done') return detail.body;
    if (Date.now() > deadline) throw new Error(`the session was not analysed within ${timeoutMs} ms: ${JSON.stringify(detail.body).slice(0, 1000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const structuredRequests = (openai: FakeOpenAI, name?: string) =>
  openai.requests.filter((r) => {
    const format = (r.body as { response_format?: { type: string; json_schema: { name: string } } } | null)?.response_format;
    return r.path === '/v1/chat/completions' && format?.type === 'json_schema' && (name === undefined || format.json_schema.name === name);
  });

describe('a call’s outcome and success', () => {
  let openai: FakeOpenAI;
  let server: TestServer;
  let account: Account;
  beforeAll(async () => {
    openai = await startFakeOpenAI();
    server = await startTestServer({
      providers: { llm: { provider: 'openai', apiKey: 'sk-test', baseUrl: openai.url, timeoutMs: 5_000 } },
      webhooks: { allowPrivate: true, retrySeconds: [0.3, 0.3], timeoutMs: 3_000 },
    });
    account = await createAccount(server);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await openai?.close();
  });
  beforeEach(() => {
    openai.setRules([]);
    openai.requests.length = 0;
  });

  it('taken wholly from the variables asks no model, and the plain criteria say why it succeeded', { timeout: 60_000 }, async () => {
    const flowId = await createFlow(server, account.apiKey, 'From variables', FROM_VARIABLES);
    const sessionId = await playBooking(server, account, flowId);
    const detail = await analysed(server, account, sessionId);
    expect(detail.outcome).toEqual({
      values: { booked: true, slot: '7pm' },
      fields: { booked: { value: true, source: 'variable', status: 'known' }, slot: { value: '7pm', source: 'variable', status: 'known' } },
      errors: [],
    });
    expect(detail.success).toEqual({
      value: true,
      criteria: [
        { criterion: 'outcome: booked == true', kind: 'outcome', met: true, reason: 'outcome.booked is true' },
        { criterion: 'reached: confirmed', kind: 'reached', met: true, reason: 'the call reached the state "confirmed"' },
        { criterion: 'transferred: false', kind: 'transferred', met: true, reason: 'the call was not transferred' },
      ],
    });
    expect(openai.requests.filter((r) => r.path === '/v1/chat/completions')).toEqual([]);

    // The list shows it and filters by it.
    const succeeded = await server.request('GET', `/v1/sessions?success=true&flow_id=${flowId}`, { apiKey: account.apiKey });
    expect(succeeded.body.map((s: { id: string; success: unknown }) => [s.id, s.success])).toEqual([[sessionId, true]]);
    // The list carries each call's outcome values, as the studio's Outcome column shows them.
    expect(succeeded.body[0].outcome).toEqual({ booked: true, slot: '7pm' });
    const failed = await server.request('GET', `/v1/sessions?success=false&flow_id=${flowId}`, { apiKey: account.apiKey });
    expect(failed.body).toEqual([]);
    const wrong = await server.request('GET', '/v1/sessions?success=maybe', { apiKey: account.apiKey });
    expect(wrong.status).toBe(422);
    expect(wrong.text).toContain('success must be one of true, false, unknown');
  });

  it('extracts the rest with the model, checked against each field; a wrong type is asked again, then unknown with the error', { timeout: 60_000 }, async () => {
    // party is answered as text every time: never a whole number.
    openai.setRules([
      { when: { jsonSchemaName: 'call_outcome', nth: 1 }, respond: { json: { callback: '+15550001111', party: 'four' } } },
      { when: { jsonSchemaName: 'call_outcome' }, respond: { json: { party: 'four' } } },
      { when: { jsonSchemaName: 'criterion_judgement' }, respond: { json: { met: true, reason: 'The caller booked 7pm, the time they asked for.' } } },
    ]);
    const flowId = await createFlow(server, account.apiKey, 'Extracted', EXTRACTED);
    const sessionId = await playBooking(server, account, flowId);
    const detail = await analysed(server, account, sessionId);
    expect(detail.outcome.fields.booked).toEqual({ value: true, source: 'variable', status: 'known' });
    expect(detail.outcome.fields.callback).toEqual({ value: '+15550001111', source: 'model', status: 'known' });
    expect(detail.outcome.fields.party).toMatchObject({ value: null, source: 'model', status: 'unknown' });
    expect(detail.outcome.fields.party.error).toContain('in 3 requests: expected a whole number, got "four"');
    expect(detail.outcome.errors).toEqual([`party: ${detail.outcome.fields.party.error}`]);

    // Three requests for the outcome: the first for both fields, the next two for party alone, told what was wrong.
    const asked = structuredRequests(openai, 'call_outcome').map((r) => r.body as any);
    expect(asked).toHaveLength(3);
    expect(asked[0].response_format.json_schema.strict).toBe(true);
    // The flow's own model, as its calls use it.
    expect(asked.map((r) => r.model)).toEqual(['flow-model', 'flow-model', 'flow-model']);
    expect(Object.keys(asked[0].response_format.json_schema.schema.properties)).toEqual(['callback', 'party']);
    expect(Object.keys(asked[1].response_format.json_schema.schema.properties)).toEqual(['party']);
    expect(asked[1].messages.at(-1).content).toContain('party: expected a whole number, got "four"');
    // The judged criterion, asked once.
    expect(structuredRequests(openai, 'criterion_judgement')).toHaveLength(1);
    expect(detail.success).toEqual({
      value: true,
      criteria: [
        { criterion: 'outcome: booked == true', kind: 'outcome', met: true, reason: 'outcome.booked is true' },
        { criterion: 'judge: The caller got a table for the time they wanted', kind: 'judge', met: true, reason: 'The caller booked 7pm, the time they asked for.' },
      ],
    });
  });

  it('reads values out of the call the model is shown, deterministically', { timeout: 60_000 }, async () => {
    // The fake fills each field from the prompt: the call's variables are in it.
    openai.setRules([
      { when: { jsonSchemaName: 'call_outcome' }, respond: { extract: { callback: /"slot":"([^"]+)"/, party: /party of (\d+)/ } } },
      { when: { jsonSchemaName: 'criterion_judgement' }, respond: { json: { met: false, reason: 'No table was free.' } } },
    ]);
    const flowId = await createFlow(server, account.apiKey, 'Extracted from the prompt', EXTRACTED);
    const sessionId = await playBooking(server, account, flowId);
    const detail = await analysed(server, account, sessionId);
    expect(detail.outcome.values).toEqual({ booked: true, callback: '7pm', party: null });
    expect(detail.outcome.fields.party).toEqual({ value: null, source: 'model', status: 'known' });
    expect(detail.success.value).toBe(false);
    expect(detail.success.criteria[1]).toMatchObject({ kind: 'judge', met: false, reason: 'No table was free.' });
    const list = await server.request('GET', `/v1/sessions?success=false&flow_id=${flowId}`, { apiKey: account.apiKey });
    expect(list.body.map((s: { id: string }) => s.id)).toEqual([sessionId]);
  });

  it('keeps every field when the model answers garbage or refuses: unknown, each with its error', { timeout: 60_000 }, async () => {
    openai.setRules([
      { when: { jsonSchemaName: 'call_outcome' }, respond: { json: 'Sure! The party was four people.' } },
      { when: { jsonSchemaName: 'criterion_judgement' }, respond: { refusal: "I'm sorry, I can't help with that." } },
    ]);
    const flowId = await createFlow(server, account.apiKey, 'Garbage', EXTRACTED);
    const sessionId = await playBooking(server, account, flowId);
    const detail = await analysed(server, account, sessionId);
    expect(detail.outcome.fields.booked.status).toBe('known');
    for (const name of ['callback', 'party']) {
      expect(detail.outcome.fields[name]).toMatchObject({ value: null, status: 'unknown' });
      expect(detail.outcome.fields[name].error).toContain('the answer is not JSON: Sure! The party was four people.');
    }
    expect(detail.success.value).toBe('unknown');
    expect(detail.success.criteria[1]).toMatchObject({ met: 'unknown' });
    expect(detail.success.criteria[1].reason).toContain("the model refused: I'm sorry, I can't help with that.");
    expect(structuredRequests(openai, 'call_outcome')).toHaveLength(3);
    expect(structuredRequests(openai, 'criterion_judgement')).toHaveLength(3);
  });

  it('with the model down still stores the analysis, the rest unknown with why, and the call ended as it would have', { timeout: 60_000 }, async () => {
    openai.setRules([{ when: { jsonSchemaName: 'call_outcome' }, respond: { status: 503 } }, { when: { jsonSchemaName: 'criterion_judgement' }, respond: { status: 503 } }]);
    const flowId = await createFlow(server, account.apiKey, 'Model down', EXTRACTED);
    const sessionId = await playBooking(server, account, flowId);
    const detail = await analysed(server, account, sessionId);
    expect(detail).toMatchObject({ status: 'ended', end_reason: 'client_ended' });
    expect(detail.outcome.fields.callback.status).toBe('unknown');
    expect(detail.outcome.fields.callback.error).toMatch(/the model \(openai\) failed/);
    expect(detail.success.value).toBe('unknown');
    const list = await server.request('GET', `/v1/sessions?success=unknown&flow_id=${flowId}`, { apiKey: account.apiKey });
    expect(list.body.map((s: { id: string }) => s.id)).toEqual([sessionId]);
  });

  it('sends session.analyzed once, signed, after session.ended', { timeout: 60_000 }, async () => {
    const receiver: WebhookReceiver = await startWebhookReceiver();
    try {
      const other = await createAccount(server);
      const hook = await server.request('POST', '/v1/webhooks', { jwt: other.jwt, body: { url: receiver.url, events: ['session.ended', 'session.analyzed'] } });
      expect(hook.status, hook.text).toBe(201);
      const flowId = await createFlow(server, other.apiKey, 'From variables', FROM_VARIABLES);
      const sessionId = await playBooking(server, other, flowId);
      const analyzed = await receiver.waitFor((r) => r.json?.type === 'session.analyzed' && r.json.data.session_id === sessionId, 30_000, 'session.analyzed');
      // Deliveries go out in parallel (a receiver orders by timestamp): the analysis is dated after the end.
      const ended = await receiver.waitFor((r) => r.json?.type === 'session.ended' && r.json.data.session_id === sessionId, 30_000, 'session.ended');
      expect(Date.parse(ended.json.timestamp)).toBeLessThanOrEqual(Date.parse(analyzed.json.timestamp));
      expect(analyzed.json.data.analyzed_at).toBeGreaterThan(ended.json.data.ended_at);
      new Webhook(hook.body.secret).verify(analyzed.body, { 'webhook-id': analyzed.id, 'webhook-timestamp': analyzed.timestamp, 'webhook-signature': analyzed.signature });
      expect(analyzed.json.data).toMatchObject({
        session_id: sessionId,
        flow_id: flowId,
        outcome: { values: { booked: true, slot: '7pm' } },
        success: { value: true },
        metadata: {},
      });
      // Once: a moment later there is still one.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(receiver.received.filter((r) => r.json?.type === 'session.analyzed')).toHaveLength(1);
      const deliveries = await server.request('GET', `/v1/webhooks/${hook.body.id}/deliveries`, { apiKey: other.apiKey });
      expect(deliveries.body.filter((d: { event_type: string }) => d.event_type === 'session.analyzed')).toMatchObject([{ status: 'delivered', attempts: 1 }]);
    } finally {
      await receiver.close();
    }
  });

  it('refuses a flow with an unknown outcome type, with its line and column', async () => {
    const response = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, body: { name: 'Bad', yaml_content: FROM_VARIABLES.replace('type: boolean, required: true }', 'type: yesno, required: true }') } });
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('invalid_flow');
    const errors = response.body.error.details.filter((d: { severity: string }) => d.severity === 'error');
    expect(errors).toMatchObject([{ code: 'invalid_outcome_type', line: 6, column: 21, path: ['settings', 'outcome', 'booked', 'type'] }]);
    expect(errors[0].message).toContain('"yesno" is not a valid outcome type; use one of string, number, integer, boolean, enum, date');
  });
});
