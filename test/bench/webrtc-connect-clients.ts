// Callers for the WebRTC connect-time bench: rounds of werift peers connecting at once, each as a
// browser would (an Opus track and a data channel of its own, candidates in the offer), timing
// each step client side. The same callers connect to Voxflow's POST /offer and to a bare werift
// answerer (webrtc.bench.ts), so the difference is Voxflow's own.
// Args: offerUrl apiKey(or "-") sessions rounds. Prints one JSON line per round:
// {round, failures, peers: [{offerMs, answerMs, iceMs, connectedMs}]}, each ms since the start.
import { MediaStreamTrack, RTCPeerConnection, RTCRtpCodecParameters } from 'werift';

const [offerUrl, apiKey, sessionsArg, roundsArg] = process.argv.slice(2);
const sessions = Number(sessionsArg);
const rounds = Number(roundsArg);

interface PeerPhases {
  offerMs: number;
  answerMs: number;
  iceMs: number;
  connectedMs: number;
}

async function connect(): Promise<{ phases: PeerPhases; close(): Promise<void> }> {
  const pc = new RTCPeerConnection({
    codecs: { audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48_000, channels: 2, payloadType: 111 })] },
    iceAdditionalHostAddresses: ['127.0.0.1'],
    iceUseIpv6: false,
  });
  try {
    pc.addTransceiver(new MediaStreamTrack({ kind: 'audio' }), { direction: 'sendrecv' });
    pc.createDataChannel('events');
    const started = performance.now();
    let iceMs = NaN;
    pc.iceConnectionStateChange.subscribe((state) => {
      if (state === 'connected' && Number.isNaN(iceMs)) iceMs = performance.now() - started;
    });
    const connected = new Promise<void>((resolve, reject) => {
      // A peer stuck in 'connecting' counts as failed rather than holding the round up.
      const timer = setTimeout(() => reject(new Error(`still ${pc.connectionState} after 20 s`)), 20_000);
      pc.connectionStateChange.subscribe((state) => {
        if (state === 'connected') resolve();
        else if (state === 'failed') reject(new Error(`failed (ICE ${pc.iceConnectionState})`));
        else return;
        clearTimeout(timer);
      });
    });
    connected.catch(() => undefined);
    await pc.setLocalDescription(await pc.createOffer());
    const offerMs = performance.now() - started;
    const response = await fetch(offerUrl!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey !== '-' ? { 'x-service-key': apiKey! } : {}) },
      body: JSON.stringify({ sdp: pc.localDescription!.sdp, type: 'offer' }),
    });
    if (!response.ok) throw new Error(`POST /offer answered ${response.status}: ${await response.text()}`);
    const answer = (await response.json()) as { sdp: string };
    const answerMs = performance.now() - started;
    await pc.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
    await connected;
    return { phases: { offerMs, answerMs, iceMs, connectedMs: performance.now() - started }, close: () => pc.close() };
  } catch (error) {
    await pc.close();
    throw error;
  }
}

for (let round = 0; round < rounds; round++) {
  const settled = await Promise.allSettled(Array.from({ length: sessions }, () => connect()));
  const peers = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  for (const s of settled) if (s.status === 'rejected') process.stderr.write(`connect failed: ${String(s.reason)}\n`);
  process.stdout.write(`${JSON.stringify({ round, failures: sessions - peers.length, peers: peers.map((p) => p.phases) })}\n`);
  // Held a moment (the server's sessions start and greet), then hung up before the next round.
  await new Promise((r) => setTimeout(r, 500));
  await Promise.all(peers.map((p) => p.close()));
  await new Promise((r) => setTimeout(r, 700));
}
process.exit(0);
