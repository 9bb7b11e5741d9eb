import type { Locator, Page } from 'playwright-core';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAvailabilityService, type AvailabilityService } from '../support/availability-service.ts';
import { createFlow } from '../support/server.ts';
import { startVoiceRig, type VoiceRig } from '../support/voice-server.ts';
import { launchChromium, tempDir, writeMicWav, type TestBrowser } from './browser.ts';
import { signInBrowser } from './studio.ts';

// Test-talk with the appointment-booking example (docs/flows.md#extended-flow-keys): a designer
// types a day, and the tool-call log shows the http tool's request, the service's answer and how
// long it took; the flow moves to the state the answer chose. The service and the model are real
// servers on loopback (the availability service, the OpenAI fake).
const BOOKING_YAML = readFileSync(new URL('../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8');

describe('test-talk with an http tool', () => {
  let chromium: TestBrowser;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let rig: VoiceRig;
  let service: AvailabilityService;
  let flowId: string;

  beforeAll(async () => {
    dir = await tempDir();
    chromium = await launchChromium({ micWav: await writeMicWav(dir.path, null) });
    service = await startAvailabilityService({ tuesday: { status: 200, json: { available: true, slot: '10:30', next_state: 'offer_slot' } } });
    rig = await startVoiceRig({
      stt: 'none',
      config: { webhooks: { allowPrivate: true } },
      rules: [
        { when: { lastRole: 'none', toolsOffered: ['check_availability'] }, respond: { text: 'Which day would you like to come in?' } },
        { when: { lastRole: 'user', lastUserText: /tuesday/i, toolsOffered: ['check_availability'] }, respond: { toolCalls: [{ name: 'check_availability', arguments: { day: 'tuesday' } }] } },
        { when: { lastRole: 'tool', systemIncludes: '10:30 on tuesday is free' }, respond: { text: 'Tuesday at 10:30 is free. Shall I book it?' } },
      ],
    });
    flowId = await createFlow(rig.server, rig.account.apiKey, 'Booking', BOOKING_YAML.replace('https://clinic.example.com/voxflow/availability', service.url));
    await rig.server.request('PUT', '/v1/secrets/tool_signing_secret', { jwt: rig.account.jwt, body: { value: `whsec_${Buffer.alloc(32, 5).toString('base64')}` } });
    await rig.server.request('PUT', '/v1/secrets/clinic_api_token', { jwt: rig.account.jwt, body: { value: 'clinic-e2e-token' } });
  });
  afterAll(async () => {
    await chromium?.close();
    await rig?.close();
    await service?.close();
    await dir?.remove();
  });

  async function toolLog(panel: Locator): Promise<string[]> {
    const items = await panel.getByRole('region', { name: /Tool calls/ }).getByRole('listitem').allInnerTexts();
    return items.map((text) => text.replace(/\s+/g, ' ').trim());
  }

  it('shows the request, the answer and its time for the call, and the state the answer chose', { timeout: 60_000 }, async () => {
    const page: Page = await chromium.newPage();
    await page.addInitScript(() => {
      (globalThis as any).navigator.mediaDevices.getUserMedia = () => Promise.reject(new DOMException('Permission denied', 'NotAllowedError'));
    });
    await signInBrowser(page, rig.server.url, rig.account);
    await page.goto(`${rig.server.url}/flow-editor?flow=${encodeURIComponent(flowId)}`);
    await page.getByRole('tab', { name: 'Talk', exact: true }).click();
    const panel = page.getByRole('region', { name: 'Test talk' });
    await panel.getByRole('heading', { name: 'Talk to this flow' }).waitFor();
    await panel.getByRole('button', { name: 'Talk', exact: true }).click();
    const refusal = panel.getByRole('alert').filter({ hasText: 'Microphone access was refused' });
    await refusal.waitFor();
    await refusal.getByRole('button', { name: 'Talk without a microphone' }).click();
    await expect.poll(() => panel.getByTestId('talk-state-name').innerText(), { timeout: 15_000 }).toBe('welcome');

    const typed = panel.getByRole('textbox', { name: 'Type a turn' });
    await expect.poll(() => typed.isDisabled(), { timeout: 10_000 }).toBe(false);
    await typed.fill('Tuesday, please');
    await typed.press('Enter');

    await expect.poll(() => panel.getByTestId('talk-state-name').innerText(), { timeout: 15_000 }).toBe('offer_slot');
    const [entry] = await toolLog(panel);
    expect(entry).toContain('ACCEPTED check_availability welcome → offer_slot');
    expect(entry).toContain(`POST ${service.url}`);
    expect(entry).toMatch(/200 · \d+ ms/);
    expect(entry).toContain('"slot":"10:30"');
    await page.close();
  });
});
