// Record → replay in Chromium (docs/testing.md#flow-tests): a stored session of the guessing game,
// typed to a win with the model fake, is saved from its view as a flow test — the caller's turns as
// steps, the accepted calls and states as expectations — trimmed and named by the designer, and the
// saved test passes when the flow's tests are run.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseFlowTests } from '../../server/flow/tests-format.ts';
import { GUESSING_GAME_RULES, connectSession, startVoiceRig, type VoiceRig } from '../support/voice-server.ts';
import { launchChromium, tempDir, writeMicWav, type TestBrowser } from './browser.ts';
import { signInBrowser } from './studio.ts';
import { WAIT } from './studio-editor-page.ts';

describe('save as test', () => {
  let rig: VoiceRig;
  let chromium: TestBrowser;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let sessionId: string;

  beforeAll(async () => {
    dir = await tempDir();
    [rig, chromium] = await Promise.all([
      startVoiceRig({ rules: GUESSING_GAME_RULES, tts: 'openai', openai: { msPerWord: 20 } }),
      writeMicWav(dir.path, null).then((wav) => launchChromium({ micWav: wav })),
    ]);
    const client = await connectSession(rig, { flow_id: rig.flowId });
    sessionId = (await client.waitFor('session_started')).session_id;
    await client.waitFor('agent_stopped_speaking');
    client.send({ type: 'text', text: "I'm ready" });
    await client.waitFor('transcript', (e) => e.role === 'agent' && /first question/.test(e.text));
    client.send({ type: 'text', text: 'Is it an animal?' });
    await client.waitFor('transcript', (e) => e.role === 'agent' && /next question/.test(e.text));
    client.send({ type: 'text', text: 'Is it a cat?' });
    await client.waitFor('flow_state', (e) => e.state === 'won');
    client.send({ type: 'end' });
    await client.waitFor('session_ended');
    await client.closed;
  }, 90_000);
  afterAll(async () => {
    await chromium?.close();
    await rig?.close();
    await dir?.remove();
  });

  it('saves the session as a test the designer trims and names, and the test passes', { timeout: 60_000 }, async () => {
    const page = await chromium.newPage();
    await signInBrowser(page, rig.server.url, rig.account);
    await page.goto(`${rig.server.url}/session?id=${sessionId}`);
    await page.getByRole('button', { name: 'Save as test' }).click(WAIT);
    const yaml = page.getByRole('textbox', { name: 'Recorded test YAML' });
    const recorded = parseFlowTests(await yaml.inputValue());
    expect(recorded.diagnostics).toEqual([]);
    expect(recorded.tests![0]!.steps).toEqual([
      { user: "I'm ready", expect: { tool_called: { name: 'begin_game', arguments: { secret_thing: 'a cat', questions_asked: '0' } }, state: 'playing' } },
      { user: 'Is it an animal?', expect: { tool_called: { name: 'record_answer', arguments: { last_answer: 'yes', questions_asked: '1' } }, state: 'playing' } },
      { user: 'Is it a cat?', expect: { tool_called: { name: 'guess_correct' }, state: 'won' } },
    ]);

    // The designer names it and drops the middle question.
    const trimmed = (await yaml.inputValue())
      .replace(/^name: .*$/m, 'name: a cat found at once')
      .replace(/  - user: Is it an animal\?\n(    .*\n)*/, '');
    await yaml.fill(trimmed);
    await page.getByRole('button', { name: 'Save test' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved “a cat found at once” to the flow' }).waitFor(WAIT);

    const tests = (await rig.server.request('GET', `/v1/flows/${rig.flowId}/tests`, { apiKey: rig.account.apiKey })).body;
    expect(tests.map((t: { name: string }) => t.name)).toEqual(['a cat found at once']);
    expect(parseFlowTests(tests[0].yaml_content).tests![0]!.steps!.map((s) => s.user)).toEqual(["I'm ready", 'Is it a cat?']);
    // Replayed scripted against the flow: the recording holds.
    const run = await rig.server.request('POST', `/v1/flows/${rig.flowId}/tests/run`, { apiKey: rig.account.apiKey, body: {} });
    let status = run.body.status as string;
    await vi.waitFor(
      async () => {
        status = (await rig.server.request('GET', `/v1/flows/${rig.flowId}/tests/runs/${run.body.id}`, { apiKey: rig.account.apiKey })).body.status;
        expect(status).not.toBe('running');
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(status).toBe('passed');
  });
});
