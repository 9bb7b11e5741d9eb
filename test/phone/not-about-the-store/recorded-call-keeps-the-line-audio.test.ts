// A recorded phone call keeps what was on the line: an 8 kHz stereo WAV as long as the call, the
// caller on the left and the agent on the right, every sample one of μ-law's 256 levels (the
// caller's frames as they came, the agent's as the caller was sent them), not the engine's 16 kHz.
import { describe, expect, it, vi } from 'vitest';
import { decodeMulaw } from '../../../server/audio/g711.ts';
import { finishedRecording } from '../../support/recordings.ts';
import { padWithSilence, synthesizeSpeech } from '../../support/speech.ts';
import { GUESSING_GAME_YAML } from '../../support/server.ts';
import { GUESSING_GAME_RULES } from '../../support/voice-server.ts';
import { usePhoneRig } from '../../support/phone-rig.ts';

const RECORDED_FLOW = GUESSING_GAME_YAML.replace(/^settings:\n/m, 'settings:\n  recording: true\n');
const MULAW_LEVELS = new Set(decodeMulaw(Uint8Array.from({ length: 256 }, (_, code) => code)));

/** RMS of one channel of interleaved stereo PCM16, over frames [from, to). */
function channelRms(samples: Int16Array, channel: 0 | 1, from: number, to: number): number {
  let sum = 0;
  let n = 0;
  for (let i = Math.max(0, from); i < Math.min(to, samples.length / 2); i++, n++) sum += samples[i * 2 + channel]! ** 2;
  return n === 0 ? 0 : Math.sqrt(sum / n);
}

function channel(samples: Int16Array, which: 0 | 1): Int16Array {
  return samples.filter((_, i) => i % 2 === which);
}

describe('a recorded Twilio call', () => {
  const rig = usePhoneRig('twilio', { flowYaml: RECORDED_FLOW, rules: GUESSING_GAME_RULES, transcripts: ["I'm ready"], tts: 'openai', openai: { msPerWord: 80 } });

  it('is recorded as it was on the line: 8 kHz, as long as the call, both sides', { timeout: 90_000 }, async () => {
    const { server, account } = rig();
    const callId = 'CA22222222222222222222222222222222';
    const stream = await rig().call(callId);
    const callStarted = performance.now();

    // The greeting is heard to its end (its mark comes back), then the caller answers.
    await vi.waitFor(() => expect(stream.acknowledgedMarks.length).toBeGreaterThan(0), { timeout: 30_000, interval: 100 });
    await stream.sendAudio(padWithSilence(await synthesizeSpeech("I'm ready"), 200, 600), 16000);
    const session = await vi.waitFor(
      async () => {
        const list = await server.request('GET', '/v1/sessions', { apiKey: account.apiKey });
        const found = list.body.find((s: { transport: string }) => s.transport === 'twilio');
        const detail = await server.request('GET', `/v1/sessions/${found.id}`, { apiKey: account.apiKey });
        expect(detail.body.path.map((p: { state: string }) => p.state)).toContain('playing');
        return detail.body as { id: string };
      },
      { timeout: 20_000, interval: 200 },
    );
    // The agent's reply to it, heard to its end; the line carries the caller's silence meanwhile, as a carrier's does.
    await Promise.all([
      vi.waitFor(() => expect(stream.acknowledgedMarks.length).toBeGreaterThan(1), { timeout: 30_000, interval: 100 }),
      stream.sendSilence(2500),
    ]);
    await stream.sendSilence(500);
    await stream.hangUp();
    const callSeconds = (performance.now() - callStarted) / 1000;

    const ended = await vi.waitFor(
      async () => {
        const detail = await server.request('GET', `/v1/sessions/${session.id}`, { apiKey: account.apiKey });
        expect(detail.body.status).toBe('ended');
        return detail.body;
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(ended.recording).toMatchObject({ url: expect.stringMatching(new RegExp(`/v1/sessions/${session.id}/recording$`)), format: 'audio/wav' });

    const { wav } = await finishedRecording(`${server.url}/v1/sessions/${session.id}/recording`, { 'x-service-key': account.apiKey });
    expect(wav.toString('latin1', 0, 4)).toBe('RIFF');
    expect(wav.readUInt16LE(20)).toBe(1); // PCM
    expect(wav.readUInt16LE(22)).toBe(2); // stereo
    expect(wav.readUInt32LE(24)).toBe(8000);
    expect(wav.readUInt32LE(28)).toBe(8000 * 4); // bytes a second
    expect(wav.readUInt32LE(40)).toBe(wav.length - 44);
    const samples = new Int16Array(wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + wav.length));

    // As long as the call: from the stream's start (the session starts a moment later) to the hang-up.
    const seconds = samples.length / 2 / 8000;
    expect(seconds).toBeLessThanOrEqual(callSeconds + 0.1);
    expect(seconds).toBeGreaterThan(callSeconds - 1);

    // Both sides, each alone where it spoke (100 ms windows), as in every recording.
    const windows = Math.floor(samples.length / 2 / 800);
    let agentOnly = 0;
    let callerOnly = 0;
    for (let w = 0; w < windows; w++) {
      const left = channelRms(samples, 0, w * 800, (w + 1) * 800);
      const right = channelRms(samples, 1, w * 800, (w + 1) * 800);
      if (right > 500 && left < 50) agentOnly++;
      if (left > 500 && right < 50) callerOnly++;
    }
    expect(agentOnly, 'windows where only the agent is heard').toBeGreaterThan(5);
    expect(callerOnly, 'windows where only the caller is heard').toBeGreaterThan(3);

    // What was on the line: every sample of both sides is a μ-law level, and each loud 20 ms frame
    // the caller was sent is in the agent's channel sample for sample.
    const offLine = samples.filter((s) => !MULAW_LEVELS.has(s)).length;
    expect(offLine, 'samples that are not μ-law levels').toBe(0);
    const agent = channel(samples, 1);
    const at = new Map<string, number[]>();
    for (let i = 0; i + 4 <= agent.length; i++) {
      const key = agent.subarray(i, i + 4).join(',');
      const list = at.get(key);
      if (list) list.push(i);
      else at.set(key, [i]);
    }
    const sent = stream.receivedAudio();
    let loud = 0;
    let found = 0;
    for (let f = 0; f + 160 <= sent.length; f += 160) {
      const frame = sent.subarray(f, f + 160);
      if (Math.sqrt(frame.reduce((sum, s) => sum + s * s, 0) / 160) < 500) continue;
      loud++;
      const starts = at.get(frame.subarray(0, 4).join(',')) ?? [];
      if (starts.some((i) => frame.every((s, k) => agent[i + k] === s))) found++;
    }
    expect(loud).toBeGreaterThan(20);
    expect(found, `loud frames sent to the caller that are in the recording, of ${loud}`).toBe(loud);
  });
});
