// Settings → Webhooks against the real server and a real receiver: an endpoint added here gets a
// session's end, signed with the secret shown once here; a delivery the receiver refused is
// listed with its attempt and answer, "Retry now" sends it again under the same webhook-id, and
// the list then says Delivered.
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlow } from '../support/server.ts';
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { screenshot } from './browser.ts';
import { startScreensServer } from './studio-screens-server.ts';
import { startStudioRig, type StudioRig } from './studio.ts';

describe('Settings → Webhooks', () => {
  let rig: StudioRig;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // A refused delivery waits ten minutes for its retry: only "Retry now" sends it sooner.
    rig = await startStudioRig({ server: await startScreensServer({ webhooks: { allowPrivate: true, retrySeconds: [600] } }) });
  }, 60_000);
  afterAll(async () => {
    await rig?.close();
    await rig?.server.close();
    await receiver?.close();
  });

  async function playShortSession(): Promise<string> {
    const flowId = await createFlow(rig.server, rig.account.apiKey);
    const client = await connectVoice(wsUrl(rig.server.url, `/ws?mode=flow&program_id=${flowId}&access_token=${rig.account.jwt}`));
    const started = await client.waitFor('session_started', undefined, 15_000);
    await client.waitFor('flow_state');
    client.send({ type: 'simulate_tool', name: 'begin_game', arguments: { secret_thing: 'a comet' } });
    await client.waitFor('flow_state', (e) => e.state === 'playing');
    client.send({ type: 'end' });
    await client.waitFor('session_ended');
    await client.closed;
    return started.session_id as string;
  }

  it('adds an endpoint with its secret shown once, lists a refused delivery, retries it now, and shows it delivered', { timeout: 60_000 }, async () => {
    receiver.answerWith(() => 503);
    const page: Page = await rig.open('/settings');
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: rig.server.url });
    const section = page.getByRole('region', { name: 'Webhooks' });
    await section.getByLabel('Endpoint URL').fill(receiver.url);
    for (const event of ['session.started', 'session.state_changed', 'session.tool_called', 'call.status', 'session.analyzed']) await section.getByRole('checkbox', { name: event }).uncheck();
    await section.getByRole('button', { name: 'Add endpoint' }).click();

    const reveal = page.getByRole('region', { name: `Signing secret for ${receiver.url}` });
    await reveal.waitFor();
    const secret = await reveal.getByTestId('new-webhook-secret').innerText();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    await reveal.getByRole('button', { name: 'Copy the signing secret' }).click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await reveal.getByRole('button', { name: "Done, I've copied it" }).click();
    await reveal.waitFor({ state: 'hidden' });
    expect(await page.content()).not.toContain(secret.slice(6));

    const stored = await rig.server.request('GET', '/v1/webhooks', { jwt: rig.account.jwt });
    expect(stored.body).toEqual([expect.objectContaining({ url: receiver.url, events: ['session.ended'] })]);
    const endpoint = section.getByRole('listitem', { name: receiver.url });
    expect(await endpoint.innerText()).toContain('session.ended');

    const sessionId = await playShortSession();
    const refused = await receiver.waitFor((r) => r.json?.data?.session_id === sessionId, 15_000, 'the first attempt');

    await endpoint.getByRole('button', { name: 'Deliveries' }).click();
    const row = endpoint.getByRole('table', { name: 'Deliveries' }).getByRole('row').filter({ hasText: 'session.ended' });
    await row.filter({ hasText: 'Waiting to retry' }).waitFor({ timeout: 15_000 });
    expect(await row.innerText()).toContain('the receiver answered 503');

    receiver.answerWith(() => 200);
    await row.getByRole('button', { name: 'Retry session.ended now' }).click();
    await row.filter({ hasText: 'Delivered' }).waitFor({ timeout: 15_000 });
    const cells = await row.getByRole('cell').allInnerTexts();
    expect(cells.slice(1, 4)).toEqual(['Delivered', '2', '200']);
    await screenshot(page, 'studio-settings-webhooks');

    // What arrived: the same signed event twice under one id, the second time taken.
    const sent = receiver.received.filter((r) => r.json?.data?.session_id === sessionId);
    expect(sent.map((r) => r.id)).toEqual([refused.id, refused.id]);
    const payload = new Webhook(secret).verify(sent[1]!.body, { 'webhook-id': sent[1]!.id, 'webhook-timestamp': sent[1]!.timestamp, 'webhook-signature': sent[1]!.signature }) as any;
    expect(payload).toMatchObject({ type: 'session.ended', data: { id: sessionId, status: 'ended', variables: { secret_thing: 'a comet' } } });

    // Deleting asks first, and then the endpoint is gone from the screen and the server.
    await endpoint.getByRole('button', { name: `Delete ${receiver.url}` }).click();
    await page.getByRole('dialog', { name: 'Delete this webhook endpoint?' }).getByRole('button', { name: 'Delete endpoint' }).click();
    await page.getByRole('status').filter({ hasText: `Deleted the endpoint ${receiver.url}.` }).waitFor();
    expect(await endpoint.count()).toBe(0);
    expect((await rig.server.request('GET', '/v1/webhooks', { jwt: rig.account.jwt })).body).toEqual([]);
    await page.close();
  });

  it('fits 1024×700 with a long URL and its deliveries open, and the section button jumps to it', { timeout: 60_000 }, async () => {
    const long = `${receiver.url}/${'a-very-long-path-segment/'.repeat(12)}end`;
    const created = await rig.server.request('POST', '/v1/webhooks', { jwt: rig.account.jwt, body: { url: long } });
    expect(created.status).toBe(201);
    receiver.answerWith(() => 200);
    const sessionId = await playShortSession();
    await receiver.waitFor((r) => r.json?.type === 'session.ended' && r.json?.data?.session_id === sessionId, 15_000, 'session.ended');

    const page = await rig.open('/settings', { width: 1024, height: 700 });
    await page.getByRole('navigation', { name: 'Settings sections' }).getByRole('button', { name: 'Webhooks' }).click();
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Webhooks');
    const endpoint = page.getByRole('listitem', { name: long });
    await endpoint.getByRole('button', { name: 'Deliveries' }).click();
    await endpoint.getByRole('row').filter({ hasText: 'session.ended' }).filter({ hasText: 'Delivered' }).waitFor({ timeout: 15_000 });
    expect(await endpoint.getByRole('row').count()).toBe(5); // the header and the session's four events
    const sideways = await page.evaluate(() => {
      const doc = (globalThis as any).document;
      const main = doc.querySelector('main');
      return { page: doc.documentElement.scrollWidth > doc.documentElement.clientWidth + 1, main: main.scrollWidth > main.clientWidth + 1 };
    });
    expect(sideways).toEqual({ page: false, main: false });
    await screenshot(page, 'studio-settings-webhooks-1024x700');
    // From a delivery to the call it tells of.
    await endpoint.getByRole('link', { name: 'Open the session of this session.ended' }).click();
    await page.waitForURL((url) => url.searchParams.get('id') === sessionId);
    await rig.server.request('DELETE', `/v1/webhooks/${created.body.id}`, { jwt: rig.account.jwt });
    await page.close();
  });
});
