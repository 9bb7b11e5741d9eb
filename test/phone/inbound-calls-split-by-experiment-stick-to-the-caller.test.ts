// An experiment on a phone number's flow (docs/api.md#experiments): every call from one number
// gets the same arm (the caller id is the number the call comes from), and the call runs that
// arm's version over the carrier's own webhook and media stream.
import { describe, expect, it, vi } from 'vitest';
import { GUESSING_GAME_RULES } from '../support/voice-server.ts';
import { CALLER_NUMBER, carriersToTest, usePhoneRig } from '../support/phone-rig.ts';

const flowText = (first: string) => `id: split
version: "1.0.0"
initial_state: ${first}
states:
  ${first}:
    respond: false
    agent: { prompt: Say hello. }
`;

describe.each(carriersToTest(['twilio'] as const, 'twilio'))('%s calls to a flow under an experiment', (carrier) => {
  const rig = usePhoneRig(carrier, { rules: GUESSING_GAME_RULES, flowYaml: flowText('one') });

  it('give one caller one arm, call after call, and each call runs its arm’s version', { timeout: 90_000 }, async () => {
    const { server, account, flowId } = rig();
    const second = await server.request('PUT', `/v1/flows/${flowId}`, { apiKey: account.apiKey, body: { yaml_content: flowText('two') } });
    expect(second.body.published_version).toBe(2);
    const started = await server.request('POST', `/v1/flows/${flowId}/experiments`, { jwt: account.jwt, body: { name: 'Phone split', arms: [{ version: 1, weight: 1 }, { version: 2, weight: 1 }] } });
    expect(started.status, started.text).toBe(201);

    for (let i = 0; i < 6; i++) expect((await rig().ring(`CA${String(i).padStart(32, '0')}`)).status).toBe(200);
    const rung = (await server.request('GET', `/v1/sessions?flow_id=${flowId}`, { apiKey: account.apiKey })).body as Array<{ experiment_id: string; experiment_arm: number }>;
    expect(rung).toHaveLength(6);
    expect(new Set(rung.map((s) => s.experiment_id))).toEqual(new Set([started.body.id]));
    const arms = new Set(rung.map((s) => s.experiment_arm));
    expect(arms.size, `the caller ${CALLER_NUMBER} got arms ${[...arms].join(', ')}`).toBe(1);
    const arm = [...arms][0]!;

    const stream = await rig().call('CA99999999999999999999999999999999');
    try {
      const detail = await vi.waitFor(
        async () => {
          const list = await server.request('GET', `/v1/sessions?flow_id=${flowId}&status=connected`, { apiKey: account.apiKey });
          const found = list.body[0];
          expect(found).toBeDefined();
          const got = await server.request('GET', `/v1/sessions/${found.id}`, { apiKey: account.apiKey });
          expect(got.body.path.length).toBeGreaterThan(0);
          return got.body;
        },
        { timeout: 30_000, interval: 200 },
      );
      expect(detail).toMatchObject({ experiment_id: started.body.id, experiment_arm: arm, flow_version: arm, from: CALLER_NUMBER });
      expect(detail.path[0].state).toBe(arm === 1 ? 'one' : 'two');
    } finally {
      await stream.hangUp();
    }
  });
});
