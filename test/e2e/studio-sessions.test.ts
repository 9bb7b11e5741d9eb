import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server.ts';
import { createFlow } from '../support/server.ts';
import { connectVoice, type VoiceClient } from '../support/voice-client.ts';
import { screenshot } from './browser.ts';
import { startStudioRig, type StudioRig } from './studio.ts';
import { startScreensServer } from './studio-screens-server.ts';

// The sessions screen lists what GET /v1/sessions has, in words: the flow by name, how it
// connected, its status, how long it lasted, what it cost and why it ended.
describe('the studio sessions screen', () => {
  let openai: FakeOpenAI;
  let rig: StudioRig;
  let live: VoiceClient | undefined;

  beforeAll(async () => {
    openai = await startFakeOpenAI({ rules: [{ when: { lastRole: 'none' }, respond: { text: 'Hello, ready when you are.' } }] });
    // The model runs on the fake with the server's key, so a session costs 1 cent a minute (the
    // voice is the built-in one, speech to text is off): the screen has a real cost to show.
    const server = await startScreensServer({
      providers: { llm: { provider: 'openai', apiKey: 'sk-test', baseUrl: openai.url }, stt: { provider: 'none' }, tts: { provider: 'flite' } },
    });
    rig = await startStudioRig({ server });
  }, 60_000);
  afterAll(async () => {
    live?.close();
    await rig?.close();
    await rig?.server.close();
    await openai?.close();
  });

  const start = async (body: Record<string, unknown>) => {
    const response = await rig.server.request('POST', '/v1/sessions', { apiKey: rig.account.apiKey, body });
    expect(response.status).toBe(200);
    return response.body as { session_token: string; ws_url: string };
  };
  const rowOf = (page: Page, token: string) => page.getByRole('table', { name: 'Sessions' }).getByRole('row').filter({ hasText: `${token.slice(0, 12)}…` });
  const cents = (value: number) => `$${(value / 100).toFixed(2)}`;

  let page: Page;

  it('says there are no sessions yet, and how they start', { timeout: 30_000 }, async () => {
    page = await rig.open('/sessions');
    await page.getByRole('heading', { name: 'No sessions yet' }).waitFor();
    expect(await page.getByRole('region', { name: 'No sessions yet' }).innerText()).toContain('POST /v1/sessions');
    expect(await page.title()).toBe('Sessions · Voxflow Studio');
    await screenshot(page, 'studio-sessions-empty');
  });

  it('lists sessions started from a backend, with flow, status, duration, cost and end reason', { timeout: 60_000 }, async () => {
    const flowId = await createFlow(rig.server, rig.account.apiKey, 'Guessing game');
    const waiting = await start({ flow_id: flowId });
    const assistant = await start({});

    // One session talks and is ended by the caller: it gets a duration, a charge and a reason.
    const ended = await start({ flow_id: flowId, metadata: { crm_id: '42' } });
    const client = await connectVoice(ended.ws_url);
    await client.waitFor('agent_stopped_speaking', undefined, 20_000);
    client.send({ type: 'end' });
    const endEvent = await client.waitFor('session_ended', undefined, 10_000);
    client.close();
    // One stays connected.
    const liveStart = await start({ flow_id: flowId });
    live = await connectVoice(liveStart.ws_url);
    await live.waitFor('session_started');

    const records = (await rig.server.request('GET', '/v1/sessions', { jwt: rig.account.jwt })).body as Array<Record<string, any>>;
    const endedRecord = records.find((r) => ended.session_token.startsWith(r.token_prefix))!;
    expect(endedRecord.status).toBe('ended');
    expect(endedRecord.credits_charged_usd_cents).toBe(1);
    expect(endedRecord.duration_secs).toBe(endEvent.duration_secs);

    // The page from the empty state, refreshed.
    await page.getByRole('button', { name: 'Refresh' }).click();
    await rowOf(page, ended.session_token).waitFor();
    const endedRow = await rowOf(page, ended.session_token).innerText();
    const seconds = Math.round(endedRecord.duration_secs);
    const duration = seconds >= 60 ? `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s` : `${seconds}s`;
    for (const shown of ['Guessing game', 'Flow', 'WebSocket', 'Ended', duration, cents(endedRecord.credits_charged_usd_cents), 'Caller ended it']) expect(endedRow).toContain(shown);

    const waitingRow = await rowOf(page, waiting.session_token).innerText();
    for (const shown of ['Guessing game', 'Waiting to connect', '—', '$0.00']) expect(waitingRow).toContain(shown);
    expect(await rowOf(page, assistant.session_token).innerText()).toContain('Assistant (no flow)');
    const liveRow = await rowOf(page, liveStart.session_token).innerText();
    expect(liveRow).toContain('Live');
    expect(liveRow).not.toContain('$');

    const summary = page.locator('.summary');
    const total = records.reduce((sum, r) => sum + r.credits_charged_usd_cents, 0);
    expect(await summary.innerText()).toContain('4 sessions');
    expect(await summary.innerText()).toContain(`${cents(total)} charged`);
    // Never the session tokens themselves.
    for (const token of [waiting, assistant, ended, liveStart].map((s) => s.session_token)) expect(await page.content()).not.toContain(token);

    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1280);
    // Every status reads whole: no badge is cut off by its column.
    const clipped = await page.evaluate(
      "[...document.querySelectorAll('table .badge')].filter((b) => b.getBoundingClientRect().right > b.closest('td').getBoundingClientRect().right).map((b) => b.textContent)",
    );
    expect(clipped).toEqual([]);
    await screenshot(page, 'studio-sessions');
  });

  it("opens a session's flow in the editor, and names a deleted flow as deleted", { timeout: 30_000 }, async () => {
    const flowLink = page.getByRole('table', { name: 'Sessions' }).getByRole('link', { name: 'Guessing game' }).first();
    const href = await flowLink.getAttribute('href');
    await flowLink.click();
    await page.waitForURL((url) => url.pathname === '/flow-editor');
    expect(new URL(page.url()).search).toBe(new URL(href!, rig.server.url).search);

    const flowId = new URL(page.url()).searchParams.get('flow')!;
    expect((await rig.server.request('DELETE', `/v1/flows/${flowId}`, { jwt: rig.account.jwt })).status).toBe(204);
    await page.goto(rig.server.url + '/sessions');
    await page.getByRole('table', { name: 'Sessions' }).waitFor();
    expect(await page.getByRole('table', { name: 'Sessions' }).getByText('Deleted flow').count()).toBe(3);
    await page.close();
  });
});
