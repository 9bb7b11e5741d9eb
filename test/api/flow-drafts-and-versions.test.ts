// Drafts, versions and publish over real HTTP and WebSocket (docs/flows.md#drafts): a
// backend-started session never runs unpublished edits, publishing and rollback are versions of
// their own, and two editors of one draft cannot silently overwrite each other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, startTestServer, type TestServer } from '../support/server.ts';
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { makeOffer } from './admission-clients.ts';
import { expectError } from './error-shape.ts';

let server: TestServer;
let account: Awaited<ReturnType<typeof createAccount>>;

beforeAll(async () => {
  server = await startTestServer();
  account = await createAccount(server);
});
afterAll(async () => {
  await server.close();
});

/** A one-state flow whose state name says which text ran. */
function flowWithState(state: string, version = '1.0.0'): string {
  return `# which text ran shows in the state's name
id: versioned
version: "${version}"
initial_state: ${state}
states:
  ${state}:
    agent:
      prompt: You are in ${state}.
`;
}

const BROKEN = 'id: versioned\nversion: "2"\ninitial_state: nowhere\nstates:\n  here:\n    agent:\n      prompt: Hi.\n';

async function newFlow(yaml = flowWithState('live_one')): Promise<string> {
  const created = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, body: { name: 'Versioned', yaml_content: yaml } });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

const saveDraft = (flowId: string, yaml: string, ifMatch?: string) =>
  server.request('PUT', `/v1/flows/${flowId}/draft`, { jwt: account.jwt, body: { yaml_content: yaml }, headers: ifMatch ? { 'if-match': ifMatch } : {} });

/** Starts a session the way a business's backend does, connects, and returns the state it entered and the session's id. */
async function backendSessionState(flowId: string): Promise<{ state: string; sessionId: string }> {
  const started = await server.request('POST', '/v1/sessions', { apiKey: account.apiKey, body: { flow_id: flowId } });
  expect(started.status).toBe(200);
  const client = await connectVoice(started.body.ws_url);
  try {
    const begun = await client.waitFor('session_started');
    const state = await client.waitFor('flow_state');
    return { state: state.state, sessionId: begun.session_id };
  } finally {
    client.close();
    await client.closed;
  }
}

async function sessionDetail(sessionId: string) {
  // The detail is written as the session goes; poll until the version shows, with a generous deadline.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const detail = await server.request('GET', `/v1/sessions/${sessionId}`, { apiKey: account.apiKey });
    expect(detail.status).toBe(200);
    if (detail.body.status === 'ended' || Date.now() > deadline) return detail.body;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a flow made through the API', () => {
  it('is version 1, published, with no draft, and its document version is kept', async () => {
    const flowId = await newFlow();
    const flow = await server.request('GET', `/v1/flows/${flowId}`, { apiKey: account.apiKey });
    expect(flow.body).toMatchObject({ published_version: 1, has_draft: false });
    const versions = await server.request('GET', `/v1/flows/${flowId}/versions`, { apiKey: account.apiKey });
    expect(versions.status).toBe(200);
    expect(versions.body).toEqual([
      expect.objectContaining({ number: 1, document_version: '1.0.0', published: true, created_by: { kind: 'api_key', api_key_id: account.apiKeyId } }),
    ]);
  });

  it('PUT /v1/flows/{id} publishes the new text as the next version at once, and sessions run it', async () => {
    const flowId = await newFlow();
    const put = await server.request('PUT', `/v1/flows/${flowId}`, { apiKey: account.apiKey, body: { yaml_content: flowWithState('second', '1.1.0') } });
    expect(put.status).toBe(200);
    expect(put.body.published_version).toBe(2);
    const json = await server.request('PUT', `/v1/flows/${flowId}/json`, {
      apiKey: account.apiKey,
      body: { id: 'versioned', version: '1.2.0', initial_state: 'third', states: { third: { agent: { prompt: 'Third.' } } } },
    });
    expect(json.status).toBe(200);
    expect(json.body.published_version).toBe(3);
    const versions = await server.request('GET', `/v1/flows/${flowId}/versions`, { apiKey: account.apiKey });
    expect(versions.body.map((v: { number: number; document_version: string }) => [v.number, v.document_version])).toEqual([
      [3, '1.2.0'],
      [2, '1.1.0'],
      [1, '1.0.0'],
    ]);
    const { state, sessionId } = await backendSessionState(flowId);
    expect(state).toBe('third');
    expect((await sessionDetail(sessionId)).flow_version).toBe(3);
  });

  it('sending the live text again unchanged makes no new version', async () => {
    const yaml = flowWithState('same');
    const flowId = await newFlow(yaml);
    const put = await server.request('PUT', `/v1/flows/${flowId}`, { apiKey: account.apiKey, body: { yaml_content: yaml, name: 'Renamed' } });
    expect(put.body).toMatchObject({ name: 'Renamed', published_version: 1 });
  });
});

describe('drafts', () => {
  it('a saved draft is never what a backend-started session runs, until it is published', async () => {
    const flowId = await newFlow(flowWithState('live_one'));
    const saved = await saveDraft(flowId, flowWithState('draft_one', '1.1.0'));
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ is_draft: true, based_on_version: 1, published_version: 1 });

    // The spec's endpoints still mean the published flow.
    const flow = await server.request('GET', `/v1/flows/${flowId}`, { apiKey: account.apiKey });
    expect(flow.body).toMatchObject({ yaml_content: flowWithState('live_one'), published_version: 1, has_draft: true });
    const json = await server.request('GET', `/v1/flows/${flowId}/json`, { apiKey: account.apiKey });
    expect(json.body.initial_state).toBe('live_one');

    const before = await backendSessionState(flowId);
    expect(before.state).toBe('live_one');
    const detail = await sessionDetail(before.sessionId);
    expect(detail).toMatchObject({ flow_version: 1, flow_draft: false });

    const published = await server.request('POST', `/v1/flows/${flowId}/publish`, { jwt: account.jwt, body: { note: 'Greets by the new name' } });
    expect(published.status).toBe(201);
    expect(published.body.version).toMatchObject({ number: 2, note: 'Greets by the new name', document_version: '1.1.0', created_by: { kind: 'studio' }, published: true });
    expect(published.body.flow).toMatchObject({ published_version: 2, has_draft: false, yaml_content: flowWithState('draft_one', '1.1.0') });

    const after = await backendSessionState(flowId);
    expect(after.state).toBe('draft_one');
    expect((await sessionDetail(after.sessionId)).flow_version).toBe(2);
    // Nothing is left unpublished.
    const draft = await server.request('GET', `/v1/flows/${flowId}/draft`, { jwt: account.jwt });
    expect(draft.body).toMatchObject({ is_draft: false, yaml_content: flowWithState('draft_one', '1.1.0') });
    expectError(await server.request('POST', `/v1/flows/${flowId}/publish`, { jwt: account.jwt, body: {} }), 409, 'no_draft');
  });

  it('a draft with errors is saved with its diagnostics, but publishing it is refused with 422 and nothing changes', async () => {
    const flowId = await newFlow();
    const saved = await saveDraft(flowId, BROKEN);
    expect(saved.status).toBe(200);
    expect(saved.body.diagnostics.some((d: { severity: string; code: string }) => d.severity === 'error' && d.code === 'unknown_initial_state')).toBe(true);
    const draft = await server.request('GET', `/v1/flows/${flowId}/draft`, { jwt: account.jwt });
    expect(draft.body.yaml_content).toBe(BROKEN);

    const refused = await server.request('POST', `/v1/flows/${flowId}/publish`, { jwt: account.jwt, body: { note: 'broken' } });
    expectError(refused, 422, 'invalid_flow');
    expect(refused.body.error.details[0]).toMatchObject({ severity: 'error', code: 'unknown_initial_state', line: 3 });
    const flow = await server.request('GET', `/v1/flows/${flowId}`, { apiKey: account.apiKey });
    expect(flow.body).toMatchObject({ published_version: 1, has_draft: true });
    expect((await server.request('GET', `/v1/flows/${flowId}/versions`, { jwt: account.jwt })).body).toHaveLength(1);
  });

  it('discarding the draft leaves the published version as it was', async () => {
    const flowId = await newFlow();
    await saveDraft(flowId, flowWithState('abandoned'));
    const discarded = await server.request('DELETE', `/v1/flows/${flowId}/draft`, { jwt: account.jwt });
    expect(discarded.status).toBe(204);
    const draft = await server.request('GET', `/v1/flows/${flowId}/draft`, { jwt: account.jwt });
    expect(draft.body).toMatchObject({ is_draft: false, yaml_content: flowWithState('live_one') });
  });

  it('the studio can test the draft over /ws with draft=1 and a JWT; an API key may not', async () => {
    const flowId = await newFlow(flowWithState('live_one'));
    await saveDraft(flowId, flowWithState('draft_only'));
    const client = await connectVoice(wsUrl(server.url, `/ws?mode=flow&program_id=${flowId}&draft=1`), { authorization: `Bearer ${account.jwt}` });
    const begun = await client.waitFor('session_started');
    expect((await client.waitFor('flow_state')).state).toBe('draft_only');
    client.close();
    await client.closed;
    expect(await sessionDetail(begun.session_id)).toMatchObject({ flow_version: null, flow_draft: true });

    // Without draft=1 the studio's own sessions run what is live too.
    const live = await connectVoice(wsUrl(server.url, `/ws?mode=flow&program_id=${flowId}`), { authorization: `Bearer ${account.jwt}` });
    expect((await live.waitFor('flow_state')).state).toBe('live_one');
    live.close();
    await live.closed;

    await expect(connectVoice(wsUrl(server.url, `/ws?mode=flow&program_id=${flowId}&draft=1`), { 'x-service-key': account.apiKey })).rejects.toMatchObject({ status: 403 });
  });

  it('the studio\'s WebRTC test (/offer with draft=1) runs the draft and records so; an API key is refused', async () => {
    const flowId = await newFlow(flowWithState('live_one'));
    await saveDraft(flowId, flowWithState('draft_by_webrtc'));
    const offer = await makeOffer();
    try {
      const refused = await server.request('POST', `/offer?mode=flow&program_id=${flowId}&draft=1`, { apiKey: account.apiKey, body: { sdp: offer.sdp, type: 'offer' } });
      expectError(refused, 403, 'wrong_credential_kind');
      const answered = await server.request('POST', `/offer?mode=flow&program_id=${flowId}&draft=1`, { jwt: account.jwt, body: { sdp: offer.sdp, type: 'offer' } });
      expect(answered.status).toBe(200);
      const sessions = await server.request('GET', '/v1/sessions', { jwt: account.jwt });
      const latest = sessions.body.find((s: { flow_id: string; transport: string }) => s.flow_id === flowId && s.transport === 'webrtc');
      expect(latest).toMatchObject({ flow_version: null, flow_draft: true });
    } finally {
      await offer.close();
    }
  });

  it('a draft that does not validate is refused for a test session with a clear error', async () => {
    const flowId = await newFlow();
    await saveDraft(flowId, BROKEN);
    await expect(connectVoice(wsUrl(server.url, `/ws?mode=flow&program_id=${flowId}&draft=1`), { authorization: `Bearer ${account.jwt}` })).rejects.toMatchObject({ status: 422 });
  });
});

describe('two windows editing one draft', () => {
  it('the second save on a stale ETag is refused with 412 draft_conflict; saving with the current tag keeps it', async () => {
    const flowId = await newFlow();
    const windowA = await server.request('GET', `/v1/flows/${flowId}/draft`, { jwt: account.jwt });
    const windowB = await server.request('GET', `/v1/flows/${flowId}/draft`, { jwt: account.jwt });
    expect(windowA.headers.get('etag')).toBe(`"${windowA.body.etag}"`);
    expect(windowA.body.etag).toBe(windowB.body.etag);

    const savedA = await saveDraft(flowId, flowWithState('from_a'), windowA.headers.get('etag')!);
    expect(savedA.status).toBe(200);
    const savedB = await saveDraft(flowId, flowWithState('from_b'), windowB.headers.get('etag')!);
    expectError(savedB, 412, 'draft_conflict');
    expect(savedB.body.error.message).toMatch(/reload/i);
    expect(savedB.body.error.details[0].current_etag).toBe(savedA.body.etag);
    // Nothing of B's was written.
    expect((await server.request('GET', `/v1/flows/${flowId}/draft`, { jwt: account.jwt })).body.yaml_content).toBe(flowWithState('from_a'));

    // Publishing what B saw (not A's newer draft) is refused the same way.
    expectError(await server.request('POST', `/v1/flows/${flowId}/publish`, { jwt: account.jwt, body: {}, headers: { 'if-match': windowB.headers.get('etag')! } }), 412, 'draft_conflict');

    // "Keep mine": B saves again over the tag the conflict named.
    const kept = await saveDraft(flowId, flowWithState('from_b'), `"${savedB.body.error.details[0].current_etag}"`);
    expect(kept.status).toBe(200);
    expect((await server.request('GET', `/v1/flows/${flowId}/draft`, { jwt: account.jwt })).body.yaml_content).toBe(flowWithState('from_b'));
    // A, still holding its old tag, now hears of B's save.
    expectError(await saveDraft(flowId, flowWithState('from_a_again'), savedA.headers.get('etag')!), 412, 'draft_conflict');
  });

  it('a version published elsewhere makes an editor that opened the published text reload', async () => {
    const flowId = await newFlow();
    const opened = await server.request('GET', `/v1/flows/${flowId}/draft`, { jwt: account.jwt });
    await server.request('PUT', `/v1/flows/${flowId}`, { apiKey: account.apiKey, body: { yaml_content: flowWithState('from_backend') } });
    expectError(await saveDraft(flowId, flowWithState('stale_editor'), opened.headers.get('etag')!), 412, 'draft_conflict');
  });
});

describe('history and rollback', () => {
  it('publishing an old version again makes it the newest version, live at once, and the history keeps every step', async () => {
    const flowId = await newFlow(flowWithState('first'));
    await saveDraft(flowId, flowWithState('second', '2.0.0'));
    await server.request('POST', `/v1/flows/${flowId}/publish`, { jwt: account.jwt, body: { note: 'v2' } });
    expect((await backendSessionState(flowId)).state).toBe('second');

    const rollback = await server.request('POST', `/v1/flows/${flowId}/versions/1/publish`, { jwt: account.jwt, body: {} });
    expect(rollback.status).toBe(201);
    expect(rollback.body.version).toMatchObject({ number: 3, note: 'Published again from version 1', document_version: '1.0.0', published: true });
    const { state, sessionId } = await backendSessionState(flowId);
    expect(state).toBe('first');
    expect((await sessionDetail(sessionId)).flow_version).toBe(3);

    const versions = await server.request('GET', `/v1/flows/${flowId}/versions`, { jwt: account.jwt });
    expect(versions.body.map((v: { number: number; published: boolean }) => [v.number, v.published])).toEqual([
      [3, true],
      [2, false],
      [1, false],
    ]);
    const old = await server.request('GET', `/v1/flows/${flowId}/versions/2`, { jwt: account.jwt });
    expect(old.body).toMatchObject({ number: 2, note: 'v2', yaml_content: flowWithState('second', '2.0.0'), published: false });
    const three = await server.request('GET', `/v1/flows/${flowId}/versions/3`, { jwt: account.jwt });
    expect(three.body.yaml_content).toBe(flowWithState('first'));
  });

  it('a rollback keeps the draft someone is working on', async () => {
    const flowId = await newFlow(flowWithState('first'));
    await server.request('PUT', `/v1/flows/${flowId}`, { apiKey: account.apiKey, body: { yaml_content: flowWithState('second') } });
    await saveDraft(flowId, flowWithState('work_in_progress'));
    await server.request('POST', `/v1/flows/${flowId}/versions/1/publish`, { jwt: account.jwt, body: { note: 'Back to the first' } });
    const draft = await server.request('GET', `/v1/flows/${flowId}/draft`, { jwt: account.jwt });
    expect(draft.body).toMatchObject({ is_draft: true, yaml_content: flowWithState('work_in_progress'), based_on_version: 2, published_version: 3 });
  });

  it('unknown versions, bad numbers and other accounts are refused with coded errors', async () => {
    const flowId = await newFlow();
    expectError(await server.request('GET', `/v1/flows/${flowId}/versions/9`, { jwt: account.jwt }), 404, 'flow_version_not_found');
    expectError(await server.request('GET', `/v1/flows/${flowId}/versions/two`, { jwt: account.jwt }), 422, 'invalid_request');
    expectError(await server.request('POST', `/v1/flows/${flowId}/versions/0/publish`, { jwt: account.jwt, body: {} }), 422, 'invalid_request');
    expectError(await server.request('POST', `/v1/flows/${flowId}/publish`, { jwt: account.jwt, body: { note: 5 } }), 422, 'invalid_request');
    expectError(await server.request('PUT', `/v1/flows/${flowId}/draft`, { jwt: account.jwt, body: { yaml: 'x' } }), 422, 'invalid_request');

    const other = await createAccount(server);
    for (const [method, path] of [
      ['GET', `/v1/flows/${flowId}/draft`],
      ['PUT', `/v1/flows/${flowId}/draft`],
      ['DELETE', `/v1/flows/${flowId}/draft`],
      ['POST', `/v1/flows/${flowId}/publish`],
      ['GET', `/v1/flows/${flowId}/versions`],
      ['GET', `/v1/flows/${flowId}/versions/1`],
      ['POST', `/v1/flows/${flowId}/versions/1/publish`],
    ] as const) {
      expectError(await server.request(method, path, { jwt: other.jwt, body: method === 'GET' || method === 'DELETE' ? undefined : { yaml_content: 'x' } }), 404, 'flow_not_found');
    }
    // And nothing of the owner's changed.
    expect((await server.request('GET', `/v1/flows/${flowId}`, { jwt: account.jwt })).body).toMatchObject({ published_version: 1, has_draft: false });
  });
});
