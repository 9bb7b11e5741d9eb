// POST /v1/flows/{id}/tests/run with mode audio on a server with a voice: the test's user turns
// are spoken into the engine (flite → Silero → the server's Deepgram STT, here the fake) and the
// run's result says what was heard; on a server without speech to text the mode is refused.
import { describe, expect, it, vi } from 'vitest';
import { useVoiceRig } from '../support/voice-server.ts';

const SPOKEN = `name: the game starts when the caller says so
steps:
  - user: "I'm ready to play"
    expect:
      tool_called: {name: begin_game, arguments: {secret_thing: a cat, questions_asked: "0"}}
      state: playing
      says: "got something in mind"
`;

describe('a spoken test run over the API', () => {
  const rig = useVoiceRig({ transcripts: ["I'm ready to play"] });

  it('hears the caller through the server’s own VAD and STT and passes', { timeout: 60_000 }, async () => {
    const key = rig.account.apiKey;
    const created = await rig.server.request('POST', `/v1/flows/${rig.flowId}/tests`, { apiKey: key, body: { yaml_content: SPOKEN } });
    expect(created.status).toBe(201);
    const started = await rig.server.request('POST', `/v1/flows/${rig.flowId}/tests/run`, { apiKey: key, body: { mode: 'audio', speed: 2 } });
    expect(started.status).toBe(202);
    let run: any;
    await vi.waitFor(
      async () => {
        run = (await rig.server.request('GET', `/v1/flows/${rig.flowId}/tests/runs/${started.body.id}`, { apiKey: key })).body;
        expect(run.status).not.toBe('running');
      },
      { timeout: 45_000, interval: 200 },
    );
    expect(run.error).toBeNull();
    expect(run.status).toBe('passed');
    const step = run.result.tests[0].runs[0].steps[0];
    expect(step.transcript[0]).toEqual({ role: 'user', text: "I'm ready to play" });
    expect(step.state).toBe('playing');
  });
});

describe('a spoken test run on a server that cannot hear', () => {
  const rig = useVoiceRig({ stt: 'none' });

  it('is refused with a coded reason, and nothing runs', async () => {
    const key = rig.account.apiKey;
    await rig.server.request('POST', `/v1/flows/${rig.flowId}/tests`, { apiKey: key, body: { yaml_content: SPOKEN } });
    const refused = await rig.server.request('POST', `/v1/flows/${rig.flowId}/tests/run`, { apiKey: key, body: { mode: 'audio' } });
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 422, code: 'test_mode_unavailable' });
    expect(refused.body.error.message).toContain('speech to text');
    expect((await rig.server.request('GET', `/v1/flows/${rig.flowId}/tests/runs`, { apiKey: key })).body).toEqual([]);
  });
});
