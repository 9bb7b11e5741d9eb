// A backend that only holds an API key learns what a call produced: the guessing game is
// played to `won` over a backend-started WebSocket session, and the backend reads the path,
// transcript, tool calls and variables through GET /v1/sessions/{id} and pages the raw timeline.
import { describe, expect, it } from 'vitest';
import { createAccount } from '../support/server.ts';
import { GUESSING_GAME_RULES, connectSession, useVoiceRig } from '../support/voice-server.ts';

describe('what a call leaves behind', () => {
  const rig = useVoiceRig({ rules: GUESSING_GAME_RULES, tts: 'openai', openai: { msPerWord: 20 } });

  it('the backend reads the path, transcript, tool calls and variables of a finished call', { timeout: 45_000 }, async () => {
    const client = rig.track(await connectSession(rig, { flow_id: rig.flowId, metadata: { crm_id: 'c-42' } }));
    const started = await client.waitFor('session_started');
    await client.waitFor('agent_stopped_speaking');
    client.send({ type: 'text', text: "I'm ready" });
    await client.waitFor('flow_state', (e) => e.state === 'playing');
    await client.waitFor('transcript', (e) => e.role === 'agent' && /first question/.test(e.text));
    client.send({ type: 'text', text: 'Is it an animal?' });
    await client.waitFor('tool_call', (e) => e.name === 'record_answer');
    await client.waitFor('transcript', (e) => e.role === 'agent' && /next question/.test(e.text));
    client.send({ type: 'text', text: 'Is it a cat?' });
    await client.waitFor('flow_state', (e) => e.state === 'won');
    client.send({ type: 'end' });
    const ended = await client.waitFor('session_ended');
    await client.closed;

    const id = started.session_id;
    const detail = await rig.server.request('GET', `/v1/sessions/${id}`, { apiKey: rig.account.apiKey });
    expect(detail.status).toBe(200);
    const body = detail.body;
    expect(body).toMatchObject({
      id,
      status: 'ended',
      flow_id: rig.flowId,
      end_reason: 'client_ended',
      duration_secs: ended.duration_secs,
      credits_charged_usd_cents: ended.credits_charged_usd_cents,
      metadata: { crm_id: 'c-42' },
      recording: null,
    });
    expect(body.path.map((p: { state: string }) => p.state)).toEqual(['setup', 'playing', 'won']);
    expect(body.path.every((p: { at: number }, i: number, all: Array<{ at: number }>) => i === 0 || p.at >= all[i - 1]!.at)).toBe(true);
    expect(body.variables).toMatchObject({ secret_thing: 'a cat', questions_asked: '1', last_answer: 'yes' });
    expect(body.tool_calls.map((c: { from_state: string; name: string; status: string; to_state: string }) => `${c.from_state}:${c.name}:${c.status}→${c.to_state}`)).toEqual([
      'setup:begin_game:accepted→playing',
      'playing:record_answer:accepted→playing',
      'playing:guess_correct:accepted→won',
    ]);
    const users = body.transcript.filter((t: { role: string }) => t.role === 'user').map((t: { text: string }) => t.text);
    expect(users).toEqual(["I'm ready", 'Is it an animal?', 'Is it a cat?']);
    expect(body.transcript.some((t: { role: string; text: string }) => t.role === 'agent' && /ten questions/.test(t.text))).toBe(true);
    expect(body.timeline).toMatchObject({ dropped_events: 0, cap: { events: 5000 } });
    expect(body.timeline.events).toBeGreaterThan(10);

    // The raw timeline, paged: every page follows the last, and together they are every event once.
    const seen: Array<{ seq: number; type: string }> = [];
    for (let after = 0, pages = 0; pages < 50; pages++) {
      const page = await rig.server.request('GET', `/v1/sessions/${id}/events?after=${after}&limit=7`, { jwt: rig.account.jwt });
      expect(page.status).toBe(200);
      seen.push(...page.body.events);
      if (page.body.next_after === null) break;
      after = page.body.next_after;
    }
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    expect(seen).toHaveLength(body.timeline.events);
    expect(seen[0]!.type).toBe('session_started');
    expect(seen.at(-1)!.type).toBe('session_ended');
    // Interim transcripts and pongs are not kept.
    expect(seen.filter((e) => e.type === 'pong')).toEqual([]);

    // The list says the id too, and another account cannot read any of it.
    const list = await rig.server.request('GET', '/v1/sessions', { apiKey: rig.account.apiKey });
    expect(list.body[0].id).toBe(id);
    const other = await createAccount(rig.server);
    for (const path of [`/v1/sessions/${id}`, `/v1/sessions/${id}/events`]) {
      const response = await rig.server.request('GET', path, { apiKey: other.apiKey });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('session_not_found');
    }
    const bad = await rig.server.request('GET', `/v1/sessions/${id}/events?limit=5000`, { apiKey: rig.account.apiKey });
    expect(bad.status).toBe(422);
  });
});
