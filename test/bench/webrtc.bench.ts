// WebRTC figures, measured in one run on this machine:
// - offer → connected on loopback (client side: POST /offer until the peer connection connects),
//   for 5 callers connecting at once to an idle server;
// - server CPU per WebRTC session (Opus decode + encode, SRTP, the reorder buffer, VAD, the
//   engine), from process.cpuUsage over a window with 5 callers talking, divided by 5;
// - the number of concurrent real-time WebRTC sessions the server process holds with event-loop
//   lag p99 < 20 ms, no late frames and no underruns, to the ceiling (the ladder of load-rig.ts;
//   target ≥ 40 per core with a hosted-style TTS, ≥ 15 with flite), once with flite
//   synthesizing in the server process and once with a hosted-style TTS. Callers (werift peers
//   streaming Opus speech in real time) and the provider fakes run in child processes.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { MediaStreamTrack, RTCPeerConnection, RTCRtpCodecParameters } from 'werift';
import { CONNECT_PHASES_CHANNEL, type ConnectPhases } from '../../server/transports/webrtc/peer.ts';
import { percentile, type BenchRow } from './bench-kit.ts';
import { ladderStepSeconds, lines, measureStep, sessionsHeld, spawnTs, startLoadRig } from './load-rig.ts';

async function webrtcSessions(tts: 'flite' | 'openai'): Promise<BenchRow[]> {
  const { server, apiKey, flowId, close } = await startLoadRig({ tts });
  const speech = tts === 'flite' ? 'flite TTS in the server process' : 'hosted-style TTS (fake OpenAI speech in the fakes process)';
  const seconds = ladderStepSeconds();
  const first: BenchRow[] = [];
  try {
    const rows = await sessionsHeld(
      `WebRTC sessions, ${tts}`,
      async (sessions) => {
        let connectMs: number[] = [];
        const result = await measureStep(async () => {
          const clients = spawnTs('./webrtc-load-clients.ts', [server.url, apiKey, flowId, String(sessions), String(seconds)]);
          const out = lines(clients);
          connectMs = (JSON.parse(await out.next()) as { connectMs: number[] }).connectMs.sort((a, b) => a - b);
          await new Promise((r) => setTimeout(r, 3000)); // greetings, first turns
          return async () => {
            const done = JSON.parse(await out.next()) as { failures: number; received: number; connected: number; voiceToVoice: number[] };
            return { healthy: done.failures === 0 && done.connected === sessions, voiceToVoice: done.voiceToVoice, extra: `${done.connected} of ${sessions} peers connected, ${done.received} RTP packets to callers` };
          };
        });
        if (sessions === 5 && first.length === 0) {
          first.push({ name: `offer → connected on loopback, ${tts}`, value: `${percentile(connectMs, 50).toFixed(0)} ms p50, ${connectMs.at(-1)!.toFixed(0)} ms max`, how: `${connectMs.length} werift peers connecting at once to an idle server, POST /offer to connectionState connected, client side` });
          first.push({ name: `server CPU per WebRTC session, ${tts}`, value: `${((result.cores / sessions) * 100).toFixed(1)} % of a core`, how: `process.cpuUsage of the server process over the last ${seconds - 3} s of 5 callers talking, ÷ 5 (Opus, SRTP, VAD, engine${tts === 'flite' ? ", flite's worker thread" : ''})` });
        }
        await new Promise((r) => setTimeout(r, 2000)); // let the peers close
        return result;
      },
      { step: `${seconds} s of real-time Opus from werift callers, measured after 3 s; ${speech}`, held: speech, target: tts === 'openai' ? '≥ 40 per core' : '≥ 15 per core' },
    );
    return [...first, ...rows];
  } finally {
    await close();
  }
}

// Offer → connected against werift's floor. The same callers (webrtc-connect-clients.ts, a child
// process) connect to Voxflow's POST /offer and to a bare werift answerer in this process: an
// RTCPeerConnection made as WebRtcPeer makes its own (codecs, ICE settings), answering over plain
// HTTP, with no Voxflow code. Blocks of each alternate, so both see the same machine. Voxflow's
// steps come from the server (CONNECT_PHASES_CHANNEL), the callers' from the callers.

/** A bare werift answerer: POST {sdp} → {sdp}. */
async function bareAnswerer(): Promise<{ url: string; close(): Promise<void> }> {
  const peers = new Set<RTCPeerConnection>();
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      void (async () => {
        const pc = new RTCPeerConnection({
          codecs: { audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48_000, channels: 2, payloadType: 111, parameters: 'minptime=10;useinbandfec=1', rtcpFeedback: [{ type: 'transport-cc' }] })] },
          iceUseIpv6: false,
          iceAdditionalHostAddresses: ['127.0.0.1'],
        });
        peers.add(pc);
        pc.connectionStateChange.subscribe((state) => {
          if (state === 'closed' || state === 'failed') peers.delete(pc);
        });
        pc.addTransceiver(new MediaStreamTrack({ kind: 'audio' }), { direction: 'sendrecv' });
        await pc.setRemoteDescription({ type: 'offer', sdp: (JSON.parse(body) as { sdp: string }).sdp });
        await pc.setLocalDescription(await pc.createAnswer());
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ sdp: pc.localDescription!.sdp, type: 'answer' }));
      })().catch((error: unknown) => response.writeHead(400).end(String(error)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/offer`,
    async close() {
      await Promise.all([...peers].map((pc) => pc.close()));
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

interface CallerPhases {
  offerMs: number;
  answerMs: number;
  iceMs: number;
  connectedMs: number;
}

async function connectBlock(offerUrl: string, apiKey: string, sessions: number, rounds: number): Promise<{ peers: CallerPhases[]; failures: number }> {
  // One round more than measured: the first warms the callers' process up.
  const clients = spawnTs('./webrtc-connect-clients.ts', [offerUrl, apiKey, String(sessions), String(rounds + 1)]);
  const out = lines(clients);
  const peers: CallerPhases[] = [];
  let failures = 0;
  for (let round = 0; round <= rounds; round++) {
    const line = await out.next();
    if (process.env.VOXFLOW_BENCH_DEBUG) process.stderr.write(`${offerUrl.slice(0, 40)} ${line}\n`);
    const result = JSON.parse(line) as { failures: number; peers: CallerPhases[] };
    if (round > 0) {
      failures += result.failures;
      peers.push(...result.peers);
    }
  }
  await new Promise((resolve) => clients.once('exit', resolve));
  return { peers, failures };
}

const p50 = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);
const fmt = (value: number) => (Number.isNaN(value) ? '–' : `${value.toFixed(0)}`);

async function connectTime(): Promise<BenchRow[]> {
  const { server, apiKey, flowId, close } = await startLoadRig({ tts: 'openai' });
  const bare = await bareAnswerer();
  const serverPhases: ConnectPhases[] = [];
  const onPhases = (message: unknown) => serverPhases.push({ ...(message as ConnectPhases) });
  subscribe(CONNECT_PHASES_CHANNEL, onPhases);
  const rows: BenchRow[] = [];
  try {
    await new Promise((r) => setTimeout(r, 1500)); // werift and the voice load once the server listens
    for (const [sessions, rounds] of [[1, 5], [5, 2]] as const) {
      const load: number[] = [];
      const voxflow: CallerPhases[] = [];
      const werift: CallerPhases[] = [];
      let failures = 0;
      const from = serverPhases.length;
      for (let block = 0; block < 2; block++) {
        load.push(os.loadavg()[0]!);
        const b = await connectBlock(bare.url, '-', sessions, rounds);
        const v = await connectBlock(`${server.url}/offer?mode=flow&program_id=${flowId}`, apiKey, sessions, rounds);
        werift.push(...b.peers);
        voxflow.push(...v.peers);
        failures += b.failures + v.failures;
      }
      const ours = p50(voxflow.map((p) => p.connectedMs));
      const floor = p50(werift.map((p) => p.connectedMs));
      const shape = sessions === 1 ? 'one caller at a time' : `${sessions} callers at once`;
      const loadNote = `load average ${load.map((l) => l.toFixed(1)).join(', ')}`;
      rows.push({
        name: `offer → connected on loopback, ${shape}: Voxflow ÷ bare werift`,
        value: `${(ours / floor).toFixed(2)}× (${fmt(ours)} vs ${fmt(floor)} ms p50; max ${fmt(Math.max(...voxflow.map((p) => p.connectedMs)))} vs ${fmt(Math.max(...werift.map((p) => p.connectedMs)))} ms)${failures > 0 ? `; ${failures} failed ✗` : ''}`,
        target: '≤ 1.2×',
        how: `${voxflow.length} and ${werift.length} werift callers (a child process), POST /offer until connectionState connected, client side; bare = a werift RTCPeerConnection made as the server's, answering over plain HTTP in the same process as the server; blocks alternate; ${loadNote}`,
      });
      const steps = (peers: CallerPhases[]) =>
        `offer made ${fmt(p50(peers.map((p) => p.offerMs)))}, answer back ${fmt(p50(peers.map((p) => p.answerMs - p.offerMs)))}, ICE connected ${fmt(p50(peers.map((p) => p.iceMs - p.answerMs)))}, DTLS done ${fmt(p50(peers.map((p) => p.connectedMs - p.iceMs)))}`;
      rows.push({ name: `  callers' steps, ${shape}`, value: `Voxflow: ${steps(voxflow)}; bare: ${steps(werift)} (ms p50)`, how: 'each step from the end of the one before, client side' });
      const ran = serverPhases.slice(from);
      // Admission and werift's answer run side by side from authentication on; the answer leaves once both are done.
      const ready = (p: ConnectPhases) => (p.admittedAt !== undefined && p.answeredAt !== undefined ? Math.max(p.admittedAt, p.answeredAt) : undefined);
      const step = (to: (p: ConnectPhases) => number | undefined, since: (p: ConnectPhases) => number | undefined) =>
        fmt(
          p50(
            ran.flatMap((p) => {
              const [a, b] = [to(p), since(p)];
              return a !== undefined && b !== undefined ? [a - b] : [];
            }),
          ),
        );
      const at = (key: keyof ConnectPhases) => (p: ConnectPhases) => p[key];
      rows.push({
        name: `  server's steps, ${shape}`,
        value: `authenticate ${step(at('authenticatedAt'), at('offerAt'))}; then admit ${step(at('admittedAt'), at('authenticatedAt'))} beside peer made ${step(at('peerAt'), at('authenticatedAt'))} + answer ${step(at('answeredAt'), at('peerAt'))}; answer sent ${step(ready, at('offerAt'))} after the route was entered; → ICE ${step(at('iceConnectedAt'), ready)}, → DTLS ${step(at('connectedAt'), at('iceConnectedAt'))}, session start ${step(at('sessionStartedAt'), at('connectedAt'))} (ms p50 of ${ran.length})`,
        how: 'server side, from the route entered: admit = flow, capacity, credit and the session record; answer = werift setRemoteDescription to setLocalDescription done (its candidates gathered; it is set only once the session is admitted, so this includes the wait for admission); session start = the engine session made on connected',
      });
    }
    return rows;
  } finally {
    unsubscribe(CONNECT_PHASES_CHANNEL, onPhases);
    await bare.close();
    await close();
  }
}

export async function run(): Promise<BenchRow[]> {
  if (process.env.VOXFLOW_BENCH_WEBRTC === 'connect') return connectTime();
  return [...(await connectTime()), ...(await webrtcSessions('flite')), ...(await webrtcSessions('openai'))];
}
