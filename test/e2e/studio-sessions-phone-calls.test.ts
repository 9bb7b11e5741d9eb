// Phone calls in the studio's Sessions: two calls to a keypad menu, driven through the fake
// Twilio (its signed voice webhook, then its media stream) against the server the browser uses.
// The list marks them as inbound Twilio calls between masked numbers; a call's view shows the
// numbers whole, the call status and where it was transferred, and its conversation shows each
// key pressed with the move it made (or none) and the transfer, started then completed, or
// failed with the carrier's reason.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BUSINESS_NUMBER, CALLER_NUMBER, startPhoneRig, type PhoneRig } from '../support/phone-rig.ts';
import { launchChromium, screenshot, tempDir, writeMicWav, type TestBrowser } from './browser.ts';
import { signInBrowser } from './studio.ts';

const FRONT_DESK = '+15551234567';

const MENU_YAML = `
id: front-desk
version: "1.0.0"
initial_state: menu
settings:
  base_system_prompt: You answer the phone for a dental clinic.
states:
  menu:
    ui: { artifact_type: card, prompt: "Main menu" }
    on_enter:
      say: Press 1 for opening hours, or 0 for the front desk.
    respond: false
    agent:
      prompt: Ask the caller to press 1 or 0.
    dtmf:
      keys: { "1": hours, "0": human }
  hours:
    ui: { artifact_type: card, prompt: "Hours" }
    on_enter:
      say: We are open nine to five. Press 0 for the front desk.
    respond: false
    agent:
      prompt: Say the opening hours.
    dtmf:
      keys: { "0": human }
  human:
    ui: { artifact_type: card, prompt: "Connecting" }
    on_enter:
      say: Connecting you to the front desk.
      transfer: { to: "${FRONT_DESK}", mode: cold, on_failed: menu }
    agent:
      prompt: The caller is being transferred.
`;

describe('phone calls in Sessions', () => {
  let phone: PhoneRig | undefined;
  const rig = () => phone!;
  let chromium: TestBrowser;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let transferredId: string;
  let refusedId: string;

  const detail = async (id: string) => (await rig().server.request('GET', `/v1/sessions/${id}`, { apiKey: rig().account.apiKey })).body;
  const transferEvents = async (id: string) =>
    ((await rig().server.request('GET', `/v1/sessions/${id}/events?limit=500`, { apiKey: rig().account.apiKey })).body.events as Array<{ type: string; event: { status: string; reason?: string } }>)
      .filter((e) => e.type === 'transfer')
      .map((e) => e.event);
  const transfers = async (id: string) => (await transferEvents(id)).map((e) => e.status);
  const inState = (id: string, state: string) => vi.waitFor(async () => expect((await detail(id)).path.at(-1)?.state).toBe(state), { timeout: 20_000, interval: 100 });
  const liveCall = () =>
    vi.waitFor(
      async () => {
        const list = await rig().server.request('GET', '/v1/sessions', { apiKey: rig().account.apiKey });
        const found = list.body.find((s: { transport: string; status: string }) => s.transport === 'twilio' && s.status === 'connected');
        expect(found).toBeDefined();
        return found.id as string;
      },
      { timeout: 20_000, interval: 100 },
    );

  beforeAll(async () => {
    dir = await tempDir();
    // Started here rather than with usePhoneRig, for a set-up timeout that a loaded machine needs.
    [phone, chromium] = await Promise.all([
      startPhoneRig('twilio', { llm: 'none', transcripts: [], flowYaml: MENU_YAML }),
      writeMicWav(dir.path, null).then((wav) => launchChromium({ micWav: wav })),
    ]);

    // A caller presses 9 (nothing), 1 (the hours), then 0: handed to the front desk.
    const first = await rig().call('CA44444444444444444444444444444444');
    transferredId = await liveCall();
    await inState(transferredId, 'menu');
    first.pressDigit('9');
    first.pressDigit('1');
    await inState(transferredId, 'hours');
    first.pressDigit('0');
    await vi.waitFor(async () => expect(await detail(transferredId)).toMatchObject({ status: 'ended', end_reason: 'transferred' }), { timeout: 30_000, interval: 100 });
    await first.waitForClose();

    // Another presses 0 while Twilio refuses the transfer: back to the menu, then hangs up.
    const second = await rig().call('CA55555555555555555555555555555555');
    refusedId = await liveCall();
    await inState(refusedId, 'menu');
    rig().api.setFault({ status: 400, times: 1 });
    try {
      second.pressDigit('0');
      await vi.waitFor(async () => expect(await transfers(refusedId)).toEqual(['started', 'failed']), { timeout: 30_000, interval: 100 });
    } finally {
      rig().api.setFault(undefined);
    }
    await inState(refusedId, 'menu');
    await second.hangUp();
    await vi.waitFor(async () => expect((await detail(refusedId)).status).toBe('ended'), { timeout: 15_000, interval: 100 });
  }, 180_000);
  afterAll(async () => {
    await chromium?.close();
    await phone?.close();
    await dir?.remove();
  });

  async function open(path: string): Promise<Page> {
    const page = await chromium.newPage();
    await signInBrowser(page, rig().server.url, rig().account);
    await page.goto(rig().server.url + path);
    return page;
  }

  it('lists the calls as inbound Twilio calls between masked numbers', { timeout: 60_000 }, async () => {
    const page = await open('/sessions');
    const table = page.getByRole('table', { name: 'Sessions' });
    await table.waitFor();
    const calls = await table.getByTestId('phone-call').allInnerTexts();
    // "inbound" is said to screen readers (the arrow is for the eye); innerText sets it apart.
    expect(calls.map((text) => text.replace(/\s+/g, ' ').replace(' ,', ',').trim())).toEqual(Array(2).fill('↙ Twilio, inbound +1555•••0001 → +1555•••0002'));
    // The list never shows a caller's whole number.
    const listed = await table.innerText();
    expect(listed).not.toContain(CALLER_NUMBER);
    expect(listed).not.toContain(BUSINESS_NUMBER);
    await screenshot(page, 'studio-sessions-phone-calls-1280x800');
    expect(chromium.pageErrors).toEqual([]);
    await page.close();
  });

  it('shows a transferred call whole: its numbers, status and target, each key with its move, and the transfer', { timeout: 60_000 }, async () => {
    const page = await open('/sessions');
    // The newest is the refused one; the transferred call is the older.
    await page.getByRole('link', { name: /^Open the session of/ }).nth(1).click();
    await page.waitForURL(`${rig().server.url}/session?id=${transferredId}`);
    await page.getByTestId('call-kind').waitFor();
    const stored = await detail(transferredId);
    expect(await page.getByTestId('call-kind').innerText()).toBe('↙ Inbound · Twilio');
    expect(await page.getByTestId('call-from').innerText()).toBe(CALLER_NUMBER);
    expect(await page.getByTestId('call-to').innerText()).toBe(BUSINESS_NUMBER);
    expect(await page.getByTestId('call-transferred-to').innerText()).toBe(FRONT_DESK);
    const status = { answered: 'Answered', completed: 'Completed' }[stored.call_status as string] ?? stored.call_status;
    expect(await page.getByTestId('call-status').innerText()).toBe(status);

    const conversation = page.getByRole('list', { name: 'What happened, in order' });
    await conversation.waitFor();
    const lines = (await conversation.locator('li.keys, li.transfer').allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').replace(/^\d+:\d\d(\.\d)? /, '').trim());
    expect(lines).toEqual([
      'Keys Caller pressed 9 · moved nothing',
      'Keys Caller pressed 1 · menu → hours (key 1)',
      'Keys Caller pressed 0 · hours → human (key 0)',
      `Transfer to ${FRONT_DESK} (cold) started`,
      `Transfer to ${FRONT_DESK} (cold) completed`,
    ]);
    await screenshot(page, 'studio-session-view-phone-call-1280x800');
    expect(chromium.pageErrors).toEqual([]);
    await page.close();
  });

  it("shows a refused transfer with the carrier's reason, and no transfer target", { timeout: 60_000 }, async () => {
    const page = await open(`/session?id=${refusedId}`);
    const conversation = page.getByRole('list', { name: 'What happened, in order' });
    await conversation.waitFor();
    const failed = conversation.locator('li.transfer').filter({ hasText: 'failed' });
    expect(await failed.count()).toBe(1);
    const reason = (await transferEvents(refusedId)).find((e) => e.status === 'failed')?.reason;
    expect(reason).toMatch(/twilio/);
    expect(await failed.innerText()).toContain(reason!);
    expect(await page.getByTestId('call-transferred-to').count()).toBe(0);
    expect(await page.getByTestId('call-from').innerText()).toBe(CALLER_NUMBER);
    await page.close();
  });
});
