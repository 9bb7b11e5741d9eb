// The flow panel's voice picker: the voices the account's voice has (here the server's embedded
// one), one picked goes into the flow's settings, and Preview plays a short line in it from the
// server; a voice the server's voice lacks is refused in words.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { FLITE_VOICES } from '../../server/providers/catalog.ts';
import { WAIT, openFlow, storedYaml } from './studio-editor-page.ts';
import { studioSuite } from './studio-screens-server.ts';

const rig = studioSuite();

describe('the voice picker', () => {
  it('lists the server voice\'s voices, writes the one picked, and plays a preview of it', async () => {
    const { page, id } = await openFlow(rig(), 'Voice picked');
    const picker = page.getByRole('group', { name: 'Voice picker' });
    await picker.waitFor(WAIT);
    const select = picker.getByRole('combobox', { name: 'Pick a flite voice' });
    // The picker's list comes once the server has said which voice it speaks (/capabilities).
    await expect.poll(() => select.locator('option').allTextContents(), WAIT).toEqual(['Default', ...FLITE_VOICES]);
    await select.selectOption('awb');
    await expect.poll(() => page.getByRole('group', { name: 'Model, voice and listening' }).getByLabel('Voice', { exact: true }).inputValue(), WAIT).toBe('awb');
    // Saved with the draft (by autosave, or at once with Ctrl+S).
    await page.keyboard.press('Control+s');
    await expect.poll(async () => parseFlow(await storedYaml(rig(), id)).document?.settings?.voice?.voice, WAIT).toBe('awb');

    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/v1/voices/preview'), WAIT),
      picker.getByRole('button', { name: '▶ Preview' }).click(),
    ]);
    expect(response.status()).toBe(200);
    expect(JSON.parse(response.request().postData() ?? '{}')).toEqual({ voice: 'awb' });
    // The line plays: over a second of it, and the player moves through it.
    const player = picker.getByLabel('Voice preview');
    await expect.poll(() => player.evaluate((a: any) => (Number.isFinite(a.duration) ? a.duration : 0)), WAIT).toBeGreaterThan(1);
    await expect.poll(() => player.evaluate((a: any) => a.currentTime > 0 || a.ended), WAIT).toBe(true);

    // A voice the embedded voice does not have: the server says which it has.
    const voiceField = page.getByRole('group', { name: 'Model, voice and listening' }).getByLabel('Voice', { exact: true });
    await voiceField.fill('nova');
    await voiceField.blur();
    await expect.poll(() => select.inputValue(), WAIT).toBe('');
    await picker.getByRole('button', { name: '▶ Preview' }).click();
    await expect.poll(() => picker.getByRole('alert').textContent(), WAIT).toMatch(/no "nova".*slt/);
    await page.close();
  }, 90_000);
});
