// "Replay recorded calls" in the History panel (docs/testing.md#replaying-recorded-sessions): two
// typed calls are recorded on the guessing game's published version, the designer renames the
// transition that starts the game in the editor, and the designer replays the calls against the draft before
// publishing: one call's path changed (recorded playing, the draft still in setup, at the caller's
// "I'm ready"), the other took the recorded path, and the changed one links to its recorded session.
// The fake OpenAI plays the agent: it starts the game only with the tool it knows, begin_game.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { WAIT, edgeLabels, node } from './studio-editor-page.ts';
import { startStudioRig, type StudioRig } from './studio.ts';

const GAME = 'guessing game';

let fake: FakeOpenAI;
let server: TestServer;
let rig: StudioRig;
beforeAll(async () => {
  fake = await startFakeOpenAI({
    rules: [
      { when: { systemIncludes: GAME, lastUserText: /ready/i, toolsOffered: ['begin_game'] }, respond: { toolCalls: [{ name: 'begin_game', arguments: { secret_thing: 'a cat', questions_asked: '0' } }] } },
      { when: { systemIncludes: GAME, lastRole: 'tool' }, respond: { text: 'Ask away.' } },
      { when: { systemIncludes: GAME }, respond: { text: 'I think of a thing, you get ten questions. Say when you are ready.' } },
    ],
  });
  server = await startTestServer({ providers: { llm: { provider: 'openai', apiKey: 'sk-test', baseUrl: fake.url } } }, { voice: true });
  rig = await startStudioRig({ server });
}, 90_000);
afterAll(async () => {
  await rig?.close();
  await fake?.close();
});

/** A typed call to the published version: each line answered, then hung up; resolves with the session's id once it is stored as ended. */
async function recordCall(flowId: string, lines: string[], endState: string): Promise<string> {
  const client = await connectVoice(wsUrl(server.url, `/ws?mode=flow&program_id=${flowId}&access_token=${rig.account.jwt}`));
  try {
    const started = await client.waitFor('session_started', undefined, 20_000);
    await client.waitFor('flow_state', undefined, 20_000);
    for (const line of lines) {
      const answered = client.ofType('transcript').filter((e) => e.role === 'agent' && e.final).length;
      client.send({ type: 'text', text: line });
      await vi.waitFor(() => expect(client.ofType('transcript').filter((e) => e.role === 'agent' && e.final).length).toBeGreaterThan(answered), { timeout: 20_000, interval: 50 });
    }
    expect(client.ofType('flow_state').at(-1)!.state).toBe(endState);
    client.send({ type: 'end' });
    await client.closed;
    const id = started.session_id as string;
    await vi.waitFor(async () => {
      const session = await server.request('GET', `/v1/sessions/${id}`, { apiKey: rig.account.apiKey });
      expect(session.body.status).toBe('ended');
    }, { timeout: 20_000, interval: 100 });
    return id;
  } finally {
    client.close();
  }
}

describe('replaying recorded calls before publishing', () => {
  it("shows per recorded call whether the draft's path left the recorded one, and where", { timeout: 180_000 }, async () => {
    const flowId = await createFlow(server, rig.account.apiKey, 'Game with calls');
    const started = await recordCall(flowId, ["I'm ready"], 'playing');
    const asked = await recordCall(flowId, ['What is this game?'], 'setup');

    // In the editor, the designer renames the transition that starts the game (setup's tool).
    const page = await rig.open(`/flow-editor?flow=${flowId}`);
    await node(page, 'setup').waitFor(WAIT);
    await node(page, 'setup').click();
    const tool = page.locator('li.tool[data-tool="begin_game"]');
    await tool.getByRole('button').first().click();
    const name = tool.getByRole('textbox', { name: 'Name', exact: true });
    await name.fill('start_round');
    await name.press('Enter');
    await expect.poll(() => edgeLabels(page), WAIT).toContain('start_round');

    // Replaying saves the typing to the draft first: the live version stays as it was.
    await page.getByRole('button', { name: 'History' }).click();
    const replay = page.getByRole('region', { name: 'Replay recorded calls' });
    const count = replay.getByRole('spinbutton', { name: 'Recorded calls to replay' });
    // More than a replay takes is refused before anything is asked of the server.
    await count.fill('21');
    await replay.getByRole('button', { name: 'Replay recorded calls' }).click();
    expect(await replay.getByRole('alert').textContent()).toBe('Choose from 1 to 20 recorded calls.');
    await count.fill('2');
    await replay.getByRole('button', { name: 'Replay recorded calls' }).click();
    await expect.poll(() => replay.getByRole('status').textContent(), { timeout: 120_000 }).toBe('The draft left the recorded path in 1 of 2 calls');

    const calls = replay.getByRole('list', { name: 'Replayed calls' }).getByRole('listitem');
    const changed = calls.filter({ hasText: 'path changed' });
    expect(await changed.count()).toBe(1);
    expect((await changed.locator('.where').innerText()).replace(/\s+/g, ' ').trim()).toBe('At turn 1, “I\'m ready”: recorded playing, the draft setup');
    expect(await changed.getByRole('link').getAttribute('href')).toBe(`/session?id=${encodeURIComponent(started)}`);
    const same = calls.filter({ hasText: 'same path' });
    expect(await same.getByRole('link').getAttribute('href')).toBe(`/session?id=${encodeURIComponent(asked)}`);

    const stored = await server.request('GET', `/v1/flows/${flowId}/draft`, { apiKey: rig.account.apiKey });
    expect(stored.body.yaml_content).toContain('start_round');

    // The link opens the recorded session's view.
    await changed.getByRole('link').click();
    await page.waitForURL((url) => url.pathname === '/session' && url.searchParams.get('id') === started, WAIT);
    await page.getByText("I'm ready").first().waitFor(WAIT);
    await page.close();
  });
});
