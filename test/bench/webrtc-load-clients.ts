// N WebRTC callers in one process, each a werift peer connection like a browser's: Opus speech
// in real time (a question, then silence, looped), a data channel, the agent's audio received.
// Args: httpBase apiKey flowId sessions seconds. Prints a JSON summary.
import { Encoder } from '@evan/opus';
import { MediaStreamTrack, RTCPeerConnection, RTCRtpCodecParameters, RtpHeader, RtpPacket } from 'werift';
import { padWithSilence, synthesizeSpeech } from '../support/speech.ts';

const [httpBase, apiKey, flowId, sessionsArg, secondsArg] = process.argv.slice(2);
const sessions = Number(sessionsArg);
const seconds = Number(secondsArg);
const FRAME = 960; // 20 ms at 48 kHz
const CONNECT_TIMEOUT_MS = 30_000;

const question = await synthesizeSpeech('Is it something you can eat?', { sampleRate: 48_000 });
const cycle = padWithSilence(question, 200, 8000 - 200 - Math.round((question.length / 48_000) * 1000), 48_000);
// Pre-encoded once: callers replay the same packets, as a browser's encoder would produce them.
const encoder = new Encoder({ channels: 1, sample_rate: 48_000, application: 'voip' });
const packets: Buffer[] = [];
for (let at = 0; at + FRAME <= cycle.length; at += FRAME) packets.push(Buffer.from(encoder.encode(cycle.subarray(at, at + FRAME))));

let received = 0;
/** voice_to_voice_ms of the turns that ended in the measuring window (3 s after all connected). */
const voiceToVoice: number[] = [];
let windowFrom = Infinity;
const connectMs: number[] = [];
const stops: Array<() => Promise<void>> = [];
let failures = 0;

async function caller(index: number): Promise<void> {
  const pc = new RTCPeerConnection({
    codecs: { audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48_000, channels: 2, payloadType: 111 })] },
    iceAdditionalHostAddresses: ['127.0.0.1'],
    iceUseIpv6: false,
  });
  const track = new MediaStreamTrack({ kind: 'audio' });
  const transceiver = pc.addTransceiver(track, { direction: 'sendrecv' });
  transceiver.onTrack.subscribe((remote) => remote.onReceiveRtp.subscribe(() => received++));
  const events = pc.createDataChannel('events');
  events.onMessage.subscribe((data) => {
    const text = typeof data === 'string' ? data : data.toString('utf8');
    if (performance.now() < windowFrom || !text.includes('"metrics"')) return;
    const event = JSON.parse(text) as { type: string; voice_to_voice_ms?: number | null };
    if (event.type === 'metrics' && typeof event.voice_to_voice_ms === 'number') voiceToVoice.push(event.voice_to_voice_ms);
  });
  const started = performance.now();
  await pc.setLocalDescription(await pc.createOffer());
  const response = await fetch(`${httpBase}/offer?mode=flow&program_id=${flowId}`, {
    method: 'POST',
    signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS),
    headers: { 'content-type': 'application/json', 'x-service-key': apiKey! },
    body: JSON.stringify({ sdp: pc.localDescription!.sdp, type: 'offer' }),
  });
  if (!response.ok) {
    failures++;
    return;
  }
  const answer = (await response.json()) as { sdp: string };
  await pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
  // A peer that does not connect is a failed caller, not a step that waits for ever.
  const connected = await new Promise<boolean>((resolve) => {
    const timeout = setTimeout(() => resolve(false), CONNECT_TIMEOUT_MS);
    const done = () => {
      clearTimeout(timeout);
      resolve(true);
    };
    if (pc.connectionState === 'connected') done();
    pc.connectionStateChange.subscribe((state) => state === 'connected' && done());
  });
  if (!connected) {
    failures++;
    await pc.close();
    return;
  }
  connectMs.push(performance.now() - started);
  let n = Math.floor((index / sessions) * packets.length);
  let sequence = 0;
  let timestamp = 0;
  const timer = setInterval(() => {
    track.writeRtp(new RtpPacket(new RtpHeader({ payloadType: 111, sequenceNumber: sequence, timestamp, ssrc: 1000 + index }), packets[n % packets.length]!));
    sequence = (sequence + 1) & 0xffff;
    timestamp = (timestamp + FRAME) >>> 0;
    n++;
  }, 20);
  stops.push(async () => {
    clearInterval(timer);
    await pc.close();
  });
}

await Promise.all(Array.from({ length: sessions }, (_, i) => caller(i).catch(() => failures++)));
process.stdout.write(`${JSON.stringify({ phase: 'connected', connectMs })}\n`);
windowFrom = performance.now() + 3000;
await new Promise((r) => setTimeout(r, seconds * 1000));
await Promise.all(stops.map((stop) => stop()));
process.stdout.write(`${JSON.stringify({ phase: 'done', failures, received, connected: connectMs.length, voiceToVoice })}\n`);
process.exit(0);
