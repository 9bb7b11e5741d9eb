// GET /v1/flows/{id}/view over real HTTP: what the studio's canvas draws for the flow's draft (else
// its published text) and its saved layout, made by the studio's own code in a flow worker, so the
// canvas the studio draws from it is the one its flow worker gives later.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { generateFlowYaml } from '../support/generate-flow.ts';
import { analyzeFlowText } from '../../server/flow/graph/analyze.ts';
import { openAnalysed } from '../../server/flow/graph/laid-out.ts';
import type { Positions } from '../../server/flow/graph/layout.ts';
import { expectError } from './error-shape.ts';

let server: TestServer;
let account: Awaited<ReturnType<typeof createAccount>>;
let other: Awaited<ReturnType<typeof createAccount>>;

beforeAll(async () => {
  server = await startTestServer();
  account = await createAccount(server);
  other = await createAccount(server);
});
afterAll(async () => {
  await server.close();
});

/** What the studio's flow worker gives for a text and saved positions, as JSON would carry it. */
function studioView(text: string, saved: Positions) {
  const opened = openAnalysed(analyzeFlowText(text), saved);
  const { cards, links, initial } = opened.graph;
  return JSON.parse(JSON.stringify({ cards, links, initial, positions: opened.laidOut?.positions ?? {}, paths: Object.fromEntries(opened.laidOut?.paths ?? []) }));
}

const view = (flowId: string, auth: { apiKey?: string; jwt?: string }) => server.request('GET', `/v1/flows/${flowId}/view`, auth);

describe('GET /v1/flows/{id}/view', () => {
  it("is the studio's own graph, dagre's layout and edge routes for a flow never laid out", async () => {
    const yaml = generateFlowYaml(60);
    const flowId = await createFlow(server, account.apiKey, 'Sixty states', yaml);
    const answer = await view(flowId, { apiKey: account.apiKey });
    expect(answer.status).toBe(200);
    expect(answer.body.flow_id).toBe(flowId);
    expect(answer.body.etag).toBe('v1');
    expect(answer.body.view.cards).toHaveLength(60);
    expect(Object.keys(answer.body.view.positions)).toHaveLength(60);
    expect(answer.body.view).toEqual(studioView(yaml, {}));
    // Asked again, the same answer (kept, not made again).
    expect((await view(flowId, { jwt: account.jwt })).body).toEqual(answer.body);
  });

  it('follows the draft and the saved layout, placing the states added since as the studio does', async () => {
    const yaml = generateFlowYaml(12);
    const flowId = await createFlow(server, account.apiKey, 'Twelve states', yaml);
    const first = (await view(flowId, { apiKey: account.apiKey })).body.view;
    // The designer moved s0 and saved; then added a state in the draft.
    const positions: Positions = { ...first.positions, s0: { x: -900, y: -400 } };
    expect((await server.request('PUT', `/v1/flows/${flowId}`, { apiKey: account.apiKey, body: { layout: { positions } } })).status).toBe(200);
    const draft = yaml.replace('states:\n', 'states:\n  added:\n    agent:\n      prompt: A new step.\n      tools: [back]\n    tools:\n      back: { description: Back. }\n    transitions: { on_tool_call: { back: s0 } }\n');
    const saved = await server.request('PUT', `/v1/flows/${flowId}/draft`, { jwt: account.jwt, body: { yaml_content: draft } });
    expect(saved.status).toBe(200);
    const answer = await view(flowId, { jwt: account.jwt });
    expect(answer.status).toBe(200);
    expect(answer.body.etag).toBe(saved.body.etag);
    expect(answer.body.view.positions.s0).toEqual({ x: -900, y: -400 });
    expect(answer.body.view.cards.map((c: { name: string }) => c.name)).toContain('added');
    expect(answer.body.view).toEqual(studioView(draft, positions));
  });

  it('says a text that is not readable YAML has nothing to draw', async () => {
    const flowId = await createFlow(server, account.apiKey, 'Soon broken', generateFlowYaml(3));
    const broken = 'id: broken\nstates: [unclosed\n';
    expect((await server.request('PUT', `/v1/flows/${flowId}/draft`, { jwt: account.jwt, body: { yaml_content: broken } })).status).toBe(200);
    const answer = await view(flowId, { jwt: account.jwt });
    expect(answer.status).toBe(200);
    expect(answer.body.view).toBeNull();
  });

  it("is another account's flow, an unknown id, or no credentials: refused as the flow's own GET is", async () => {
    const flowId = await createFlow(server, account.apiKey, 'Mine', generateFlowYaml(3));
    expectError(await view(flowId, { apiKey: other.apiKey }), 404, 'flow_not_found');
    expectError(await view('flow_unknown', { apiKey: account.apiKey }), 404, 'flow_not_found');
    expect((await view(flowId, {})).status).toBe(401);
  });
});

describe('a flow opened in the studio, then saved', () => {
  it('has the view of what was saved made once the saves pause, so the next open finds it made; a flow never opened gets none', async () => {
    const jobs = vi.spyOn(server.app.services.flowJobs, 'flowView');
    try {
      const yaml = generateFlowYaml(8);
      const opened = await createFlow(server, account.apiKey, 'Opened', yaml);
      const neverOpened = await createFlow(server, account.apiKey, 'Never opened', yaml);
      expect((await view(opened, { jwt: account.jwt })).status).toBe(200);
      expect(jobs).toHaveBeenCalledTimes(1);

      // The studio saves as the designer types: three drafts in a row, then a pause.
      let draft = yaml;
      for (const word of ['one', 'two', 'three']) {
        draft = draft.replace(/prompt: (\S+)/, `prompt: ${word} $1`);
        expect((await server.request('PUT', `/v1/flows/${opened}/draft`, { jwt: account.jwt, body: { yaml_content: draft } })).status).toBe(200);
        expect((await server.request('PUT', `/v1/flows/${neverOpened}/draft`, { jwt: account.jwt, body: { yaml_content: draft } })).status).toBe(200);
      }
      // Made once for the burst, of the last draft, and for the opened flow only.
      await vi.waitFor(() => expect(jobs).toHaveBeenCalledTimes(2), { timeout: 15_000, interval: 100 });
      expect(jobs.mock.calls[1]![1]).toBe(draft);
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(jobs).toHaveBeenCalledTimes(2);

      // The next open is answered with it: no new job, and the view is the saved draft's.
      const answer = await view(opened, { jwt: account.jwt });
      expect(answer.status).toBe(200);
      expect(answer.body.view).toEqual(studioView(draft, {}));
      expect(jobs).toHaveBeenCalledTimes(2);
    } finally {
      jobs.mockRestore();
    }
  });
});
