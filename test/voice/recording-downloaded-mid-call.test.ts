// A recording downloaded while its call is still going on is a well-formed WAV of what has been
// recorded so far: its header's sizes match the bytes sent, the body is exactly its
// content-length, and it plays what was said up to then. A range request agrees with the whole.
import { describe, expect, it } from 'vitest';
import { GUESSING_GAME_RULES, connectSession, useVoiceRig } from '../support/voice-server.ts';

/** The loudest 100 ms of one channel of interleaved stereo PCM16 (RMS). */
function loudestWindow(samples: Int16Array, channel: 0 | 1, rate: number): number {
  const window = rate / 10;
  let loudest = 0;
  for (let from = 0; from + window <= samples.length / 2; from += window) {
    let sum = 0;
    for (let i = from; i < from + window; i++) sum += samples[i * 2 + channel]! ** 2;
    loudest = Math.max(loudest, Math.sqrt(sum / window));
  }
  return loudest;
}

describe('a recording downloaded mid-call', () => {
  const rig = useVoiceRig({ rules: GUESSING_GAME_RULES, tts: 'openai', openai: { msPerWord: 80 } });

  it('is a WAV of what has been recorded so far, its header and length agreeing', { timeout: 60_000 }, async () => {
    const client = rig.track(await connectSession(rig, { flow_id: rig.flowId, record: true }));
    const started = await client.waitFor('session_started');
    await client.waitFor('agent_stopped_speaking', undefined, 20_000);
    const url = `${rig.server.url}/v1/sessions/${started.session_id}/recording`;
    const headers = { 'x-service-key': rig.account.apiKey };

    // The greeting is on disk a second or so after it was said (the recorder writes every second).
    let wav = Buffer.alloc(0);
    let rate = 16_000;
    const deadline = Date.now() + 20_000;
    for (;;) {
      const response = await fetch(url, { headers });
      expect(response.status).toBe(200);
      wav = Buffer.from(await response.arrayBuffer());
      expect(Number(response.headers.get('content-length')), 'content-length').toBe(wav.length);
      expect(wav.toString('latin1', 0, 4)).toBe('RIFF');
      expect(wav.toString('latin1', 8, 12)).toBe('WAVE');
      expect(wav.readUInt32LE(4), 'RIFF size').toBe(wav.length - 8);
      expect(wav.readUInt32LE(40), 'data size').toBe(wav.length - 44);
      expect((wav.length - 44) % 4, 'whole stereo frames').toBe(0);
      rate = wav.readUInt32LE(24);
      const samples = new Int16Array(wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + wav.length));
      if (loudestWindow(samples, 1, rate) > 500) break;
      if (Date.now() > deadline) throw new Error(`the agent's greeting never showed in the live recording (${wav.length} bytes)`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(client.events.some((e) => e.type === 'session_ended'), 'the call is still going on').toBe(false);

    // Its header alone, by range: it names the same total the range does.
    const head = await fetch(url, { headers: { ...headers, range: 'bytes=0-43' } });
    expect(head.status).toBe(206);
    const total = Number(/\/(\d+)$/.exec(head.headers.get('content-range') ?? '')?.[1]);
    const header = Buffer.from(await head.arrayBuffer());
    expect(header.length).toBe(44);
    expect(total).toBeGreaterThanOrEqual(wav.length);
    expect(header.readUInt32LE(40)).toBe(total - 44);
    expect(header.readUInt32LE(4)).toBe(total - 8);

    // A range across the header and the audio joins them without a gap.
    const across = await fetch(url, { headers: { ...headers, range: 'bytes=40-1043' } });
    expect(across.status).toBe(206);
    const body = Buffer.from(await across.arrayBuffer());
    expect(body.length).toBe(1004);
    expect(Number(across.headers.get('content-length'))).toBe(1004);
    const acrossTotal = Number(/\/(\d+)$/.exec(across.headers.get('content-range') ?? '')?.[1]);
    expect(body.readUInt32LE(0)).toBe(acrossTotal - 44);
    expect(body.subarray(4).equals(wav.subarray(44, 1044))).toBe(true);

    client.send({ type: 'end' });
    await client.waitFor('session_ended');
  });
});
