// A session started with record: true leaves a stereo WAV: the caller on the left, the agent on
// the right, each where it was heard; it is served with range requests, to its own account only.
import { describe, expect, it } from 'vitest';
import { finishedRecording } from '../support/recordings.ts';
import { createAccount } from '../support/server.ts';
import { GUESSING_GAME_RULES, connectSession, useVoiceRig } from '../support/voice-server.ts';

/** RMS of one channel of interleaved stereo PCM16, over samples [from, to). */
function channelRms(samples: Int16Array, channel: 0 | 1, from: number, to: number): number {
  let sum = 0;
  let n = 0;
  for (let i = Math.max(0, from); i < Math.min(to, samples.length / 2); i++, n++) sum += samples[i * 2 + channel]! ** 2;
  return n === 0 ? 0 : Math.sqrt(sum / n);
}

describe('call recordings', () => {
  const rig = useVoiceRig({ rules: GUESSING_GAME_RULES, transcripts: ["I'm ready"], tts: 'openai', openai: { msPerWord: 80 } });

  it('records the caller left and the agent right, and serves the file with ranges', { timeout: 45_000 }, async () => {
    const client = rig.track(await connectSession(rig, { flow_id: rig.flowId, record: true }));
    const started = await client.waitFor('session_started');
    await client.waitFor('agent_stopped_speaking');
    await client.speak("I'm ready");
    await client.waitFor('flow_state', (e) => e.state === 'playing');
    await client.waitFor('agent_stopped_speaking', (e) => client.events.indexOf(e) > client.events.findIndex((x) => x.type === 'flow_state' && x.state === 'playing'), 15_000);
    client.send({ type: 'end' });
    await client.waitFor('session_ended');
    await client.closed;

    const id = started.session_id;
    const detail = await rig.server.request('GET', `/v1/sessions/${id}`, { apiKey: rig.account.apiKey });
    expect(detail.body.recording).toMatchObject({ url: expect.stringMatching(new RegExp(`/v1/sessions/${id}/recording$`)), format: 'audio/wav' });

    const { wav, response } = await finishedRecording(`${rig.server.url}/v1/sessions/${id}/recording`, { 'x-service-key': rig.account.apiKey });
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    expect(wav.toString('latin1', 0, 4)).toBe('RIFF');
    expect(wav.readUInt16LE(22)).toBe(2); // stereo
    expect(wav.readUInt32LE(24)).toBe(16_000);
    expect(wav.readUInt32LE(40)).toBe(wav.length - 44);
    const samples = new Int16Array(wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + wav.length));
    const seconds = samples.length / 2 / 16_000;
    expect(seconds).toBeGreaterThan(1.5);

    // Where the agent spoke the right channel is loud and the left quiet, and the other way
    // round where the caller spoke: look at every 100 ms window.
    const windows = Math.floor(samples.length / 2 / 1600);
    let agentOnly = 0;
    let callerOnly = 0;
    for (let w = 0; w < windows; w++) {
      const left = channelRms(samples, 0, w * 1600, (w + 1) * 1600);
      const right = channelRms(samples, 1, w * 1600, (w + 1) * 1600);
      if (right > 500 && left < 50) agentOnly++;
      if (left > 500 && right < 50) callerOnly++;
    }
    // At 80 ms a word the agent fills about 20 windows here (at 20 ms a word it was 5-7, and
    // CI once saw 5); the caller says one short phrase (5-6 windows).
    expect(agentOnly, 'windows where only the agent is heard').toBeGreaterThan(5);
    expect(callerOnly, 'windows where only the caller is heard').toBeGreaterThan(3);

    // Ranges: a slice, a suffix, and one past the end.
    const part = await fetch(`${rig.server.url}/v1/sessions/${id}/recording`, { headers: { 'x-service-key': rig.account.apiKey, range: 'bytes=44-1043' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 44-1043/${wav.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(wav.subarray(44, 1044))).toBe(true);
    const tail = await fetch(`${rig.server.url}/v1/sessions/${id}/recording`, { headers: { authorization: `Bearer ${rig.account.jwt}`, range: 'bytes=-100' } });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer()).equals(wav.subarray(wav.length - 100))).toBe(true);
    const past = await fetch(`${rig.server.url}/v1/sessions/${id}/recording`, { headers: { 'x-service-key': rig.account.apiKey, range: `bytes=${wav.length + 10}-` } });
    expect(past.status).toBe(416);

    // Another account cannot have it.
    const other = await createAccount(rig.server);
    const stolen = await rig.server.request('GET', `/v1/sessions/${id}/recording`, { apiKey: other.apiKey });
    expect(stolen.status).toBe(404);
  });

  it('keeps no recording of a session that did not ask for one', { timeout: 30_000 }, async () => {
    const client = rig.track(await connectSession(rig, { flow_id: rig.flowId }));
    const started = await client.waitFor('session_started');
    client.send({ type: 'end' });
    await client.waitFor('session_ended');
    const detail = await rig.server.request('GET', `/v1/sessions/${started.session_id}`, { apiKey: rig.account.apiKey });
    expect(detail.body.recording).toBeNull();
    const response = await rig.server.request('GET', `/v1/sessions/${started.session_id}/recording`, { apiKey: rig.account.apiKey });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('recording_not_found');
  });
});
