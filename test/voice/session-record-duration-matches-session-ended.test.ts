import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectSession, startVoiceRig, type VoiceRig } from '../support/voice-server.ts';

// What a backend reads later (GET /v1/sessions) must say what the caller was told when the call
// ended. Near a half second the rounding decides the number, so two clocks that start apart
// disagree: the record's started_at is the moment the token was claimed, the session's own start
// comes after the connection is set up (tens to hundreds of ms when many connect at once). These
// sessions connect together and are hung up at steps up to 1.5 s after they started, so for
// many of them one clock says under 1.5 s and the other over.
describe('a session ended across a rounding boundary', () => {
  let rig: VoiceRig;
  beforeAll(async () => {
    // No model: the sessions stay quiet, so ending them is all that happens. All 24 are one
    // account's, more than the per-account limit of a hosted server lets it hold at once.
    rig = await startVoiceRig({ llm: 'none', config: { engine: { sessionsPerAccount: 0 } } });
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('is listed with the duration_secs its session_ended event said', { timeout: 20_000 }, async () => {
    const hangUpAfterMs = Array.from({ length: 24 }, (_, i) => 1_260 + 10 * i);
    const ended = await Promise.all(
      hangUpAfterMs.map(async (afterMs) => {
        const client = await connectSession(rig, {});
        const started = await client.waitFor('session_started');
        await new Promise((resolve) => setTimeout(resolve, afterMs));
        client.send({ type: 'end' });
        const end = await client.waitFor('session_ended');
        await client.closed;
        return { id: started.session_id as string, said: end.duration_secs };
      }),
    );

    const listed = await rig.server.request('GET', '/v1/sessions', { apiKey: rig.account.apiKey });
    expect(listed.status).toBe(200);
    const recorded = ended.map(({ id }) => listed.body.find((s: { id: string }) => s.id === id)?.duration_secs);
    expect(recorded).toEqual(ended.map(({ said }) => said));
    // Every one of them lasted about a second and a half.
    for (const { said } of ended) expect([1, 2]).toContain(said);
  });
});
