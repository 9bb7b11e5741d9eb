// The Tests tab runs a flow's tests spoken, as `voxflow test --mode audio` does: each caller line
// is synthesized, heard by the voice-activity model and the server's speech recognition (the
// Deepgram fake, over its real protocol), and the run says what it costs before its result.
// A server with no speech recognition says so instead of running.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../support/server.ts';
import { startVoiceRig, type VoiceRig } from '../support/voice-server.ts';
import { WAIT, openFlow } from './studio-editor-page.ts';
import { startStudioRig, type StudioRig } from './studio.ts';

const SUITE = `tests:
  - name: ready starts the game
    steps:
      - user: "I'm ready"
        expect:
          tool_called: {name: begin_game, arguments: {secret_thing: a cat}}
          state: playing
        reply: "Okay, I've got something in mind."
`;

async function runSpoken(rig: StudioRig, name: string) {
  const { page, id } = await openFlow(rig, name);
  const imported = await rig.server.request('POST', `/v1/flows/${id}/tests/import`, { apiKey: rig.account.apiKey, body: { yaml_content: SUITE } });
  expect(imported.status).toBe(201);
  await page.getByRole('tab', { name: 'Tests' }).click();
  const panel = page.getByRole('region', { name: 'Flow tests' });
  await panel.getByRole('listitem').filter({ hasText: 'ready starts the game' }).waitFor(WAIT);
  await panel.getByRole('combobox', { name: 'How the tests run' }).selectOption({ label: 'Spoken (audio, 4× speed)' });
  await panel.getByRole('button', { name: 'Run all' }).click();
  return panel;
}

describe('the Tests tab, spoken', () => {
  let voice: VoiceRig;
  let rig: StudioRig;
  beforeAll(async () => {
    voice = await startVoiceRig({ stt: 'deepgram', llm: 'none', transcripts: ["I'm ready"] });
    rig = await startStudioRig({ server: voice.server });
  }, 90_000);
  afterAll(async () => {
    await rig?.close();
    await voice?.close();
  });

  it('speaks each line through the server\'s speech recognition and passes, saying what the run costs', { timeout: 120_000 }, async () => {
    const panel = await runSpoken(rig, 'Spoken game');
    await panel.getByRole('status').filter({ hasText: /This run costs about \d+ ¢ of credits/ }).waitFor(WAIT);
    const result = panel.getByRole('status').filter({ hasText: 'passed' });
    await expect.poll(() => result.textContent(), { timeout: 90_000 }).toMatch(/of 1 passed/);
    // A failed run says why in the panel: shown with the failure.
    expect(await result.textContent(), await panel.innerText()).toBe('1 of 1 passed');
    // The line was heard by the recognizer, not typed in: its queue is spent.
    expect(voice.deepgram.transcripts).toEqual([]);
  });

  it('says why, in words, on a server with no speech recognition', { timeout: 90_000 }, async () => {
    const plain = await startStudioRig({ server: await startTestServer() });
    try {
      const panel = await runSpoken(plain, 'Unheard game');
      const alert = panel.getByRole('alert');
      await alert.waitFor(WAIT);
      expect(await alert.innerText()).toContain('audio mode needs speech to text');
    } finally {
      await plain.close();
      await plain.server.close();
    }
  });
});
