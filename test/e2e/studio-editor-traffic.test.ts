// The flow editor's Traffic overlay (docs/studio.md#traffic), as a designer uses it: real calls
// made to the published flow, then the overlay turned on shows on the graph how many reached each
// state (and their share), how many took each edge and where they ended; an edge's count lists
// the calls that took it, each opening its session; a filter that matches none empties the counts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlow, startTestServer } from '../support/server.ts';
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { node, showCards, WAIT } from './studio-editor-page.ts';
import { startStudioRig, type StudioRig } from './studio.ts';

const FLOW = `id: traffic
version: "1.0.0"
initial_state: ask
states:
  ask:
    respond: false
    agent: { prompt: Ask for a time., tools: [book, help] }
    tools:
      book: { description: Book it. }
      help: { description: Put a person on. }
    transitions: { on_tool_call: { book: done, help: person } }
  done:
    respond: false
    agent: { prompt: Say goodbye. }
  person:
    respond: false
    agent: { prompt: Say someone will call. }
`;

describe('the Traffic overlay', () => {
  let rig: StudioRig;
  beforeAll(async () => {
    rig = await startStudioRig({ server: await startTestServer() });
  });
  afterAll(async () => {
    const server = rig?.server;
    await rig?.close();
    await server?.close();
  });

  /** A real call to the published flow: the tool made by the simulator, then ended by the caller. */
  async function call(flowId: string, tool: string, to: string): Promise<string> {
    const client = await connectVoice(wsUrl(rig.server.url, `/ws?mode=flow&program_id=${flowId}&access_token=${rig.account.jwt}`));
    const id = (await client.waitFor('session_started', undefined, 15_000)).session_id as string;
    await client.waitFor('flow_state');
    client.send({ type: 'simulate_tool', name: tool, arguments: {} });
    await client.waitFor('flow_state', (e) => e.state === to);
    client.send({ type: 'end' });
    await client.waitFor('session_ended');
    await client.closed;
    return id;
  }

  it('paints calls per state and edge and where they ended, and lists an edge’s calls', { timeout: 120_000 }, async () => {
    const flowId = await createFlow(rig.server, rig.account.apiKey, 'Traffic', FLOW);
    const booked = [await call(flowId, 'book', 'done'), await call(flowId, 'book', 'done')];
    await call(flowId, 'help', 'person');

    const page = await rig.open(`/flow-editor?flow=${flowId}`);
    await page.locator('.svelte-flow__node').first().waitFor(WAIT);
    await showCards(page);
    expect(await page.locator('[data-traffic-state]').count()).toBe(0);
    await page.getByRole('button', { name: 'Traffic' }).click();
    await expect.poll(() => page.getByTestId('traffic-summary').innerText(), WAIT).toMatch(/^3 calls/);

    const reached = (state: string) => node(page, state).locator('[data-traffic-state] .reached').innerText();
    expect(await reached('ask')).toBe('100% · 3 calls');
    expect(await reached('done')).toBe('67% · 2 calls');
    expect(await reached('person')).toBe('33% · 1 call');
    // Every call ended where its tool took it, for the reason the caller's end gives.
    expect(await node(page, 'done').locator('[data-traffic-state] .ended').allInnerTexts()).toEqual([expect.stringMatching(/^2 \S/)]);
    expect(await node(page, 'person').locator('[data-traffic-state] .ended').allInnerTexts()).toEqual([expect.stringMatching(/^1 \S/)]);
    expect(await node(page, 'ask').locator('[data-traffic-state] .ended').count()).toBe(0);
    expect(await page.locator('[data-traffic-link="ask→book"]').innerText()).toBe('2');
    expect(await page.locator('[data-traffic-link="ask→help"]').innerText()).toBe('1');

    await page.locator('[data-traffic-link="ask→book"]').click();
    const rows = page.getByTestId('traffic-session');
    await expect.poll(() => rows.count(), WAIT).toBe(2);
    await rows.first().getByRole('link').click();
    await expect.poll(() => new URL(page.url()).searchParams.get('id'), WAIT).toBe(booked[1]);
    await page.close();
  });

  it('counts none of the calls under a filter no call matches', { timeout: 120_000 }, async () => {
    const flowId = await createFlow(rig.server, rig.account.apiKey, 'Traffic filtered', FLOW);
    await call(flowId, 'book', 'done');
    const page = await rig.open(`/flow-editor?flow=${flowId}`);
    await page.locator('.svelte-flow__node').first().waitFor(WAIT);
    await showCards(page);
    await page.getByRole('button', { name: 'Traffic' }).click();
    await expect.poll(() => page.getByTestId('traffic-summary').innerText(), WAIT).toMatch(/^1 call\b/);
    await page.getByRole('combobox', { name: 'Version' }).selectOption('draft');
    await expect.poll(() => page.getByTestId('traffic-summary').innerText(), WAIT).toBe('0 calls');
    expect(await node(page, 'done').locator('[data-traffic-state] .reached').innerText()).toBe('0% · 0 calls');
    // Off again: the marks leave the graph.
    await page.getByRole('button', { name: 'Traffic' }).click();
    await expect.poll(() => page.locator('[data-traffic-state]').count(), WAIT).toBe(0);
    await page.close();
  });
});
