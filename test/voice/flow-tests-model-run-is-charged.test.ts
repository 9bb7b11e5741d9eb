// A model run over the API uses the server's (priced) language model, so it is admitted and
// charged like a session: the minute of the model it used is debited from the account's credit,
// while a scripted run of the same test costs nothing.
import { describe, expect, it, vi } from 'vitest';
import { GUESSING_GAME_TEST_RULES } from '../support/guessing-game-tests.ts';
import { useVoiceRig } from '../support/voice-server.ts';

const TEST = `name: the game starts
steps:
  - user: "I'm ready"
    expect: {tool_called: {name: begin_game, arguments: {secret_thing: a cat}}, state: playing}
`;

describe('paying for test runs', () => {
  const rig = useVoiceRig({ rules: GUESSING_GAME_TEST_RULES });

  async function runAndWait(mode: string) {
    const key = rig.account.apiKey;
    const started = await rig.server.request('POST', `/v1/flows/${rig.flowId}/tests/run`, { apiKey: key, body: { mode } });
    expect(started.status).toBe(202);
    let run: any;
    await vi.waitFor(
      async () => {
        run = (await rig.server.request('GET', `/v1/flows/${rig.flowId}/tests/runs/${started.body.id}`, { apiKey: key })).body;
        expect(run.status).not.toBe('running');
      },
      { timeout: 30_000, interval: 100 },
    );
    return run;
  }
  const balance = async () => (await rig.server.request('GET', '/v1/credits/balance', { apiKey: rig.account.apiKey })).body.balance_usd_cents as number;

  it('charges a model run for the model it used, and a scripted run nothing', { timeout: 60_000 }, async () => {
    await rig.server.request('POST', `/v1/flows/${rig.flowId}/tests`, { apiKey: rig.account.apiKey, body: { yaml_content: TEST } });
    const before = await balance();
    expect((await runAndWait('scripted')).status).toBe('passed');
    expect(await balance()).toBe(before);

    const rate = (await rig.server.request('GET', '/v1/credits/balance', { apiKey: rig.account.apiKey })).body.parts.llm.rate_per_minute_usd_cents as number;
    expect(rate).toBeGreaterThan(0);
    const model = await runAndWait('model');
    expect(model.status).toBe('passed');
    // The model answered (begin_game), so its first minute was debited; the run lasted under a minute.
    await vi.waitFor(async () => expect(await balance()).toBe(before - rate), { timeout: 5_000 });
  });
});
