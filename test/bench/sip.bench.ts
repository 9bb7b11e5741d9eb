// SIP calls against WebSocket sessions, each to its ceiling, in one run on one server
// (`npm run bench -- sip`), both with the hosted-style voice of `bench engine` and paced alike,
// one 20 ms frame every 20 ms (a question, then silence while the agent answers, 8 s a cycle):
// - WebSocket: the callers of `bench phone`'s WebSocket path (PCM16 16 kHz frames of 20 ms);
// - SIP: sipp places the calls (`-l`/`-m` the count, their starts spread over 8 s with
//   `-r N -rp 8000` as the WebSocket callers' questions are spread over their cycle) to the
//   server's UDP listener, with a scenario made from basic-call.xml whose caller plays, from its
//   ACK to its BYE, an A-law RTP stream of 20 ms packets this bench writes (a pcap): the same
//   question and cycle. sipp runs at nice 10, as the other callers do.
// Each is the ladder of load-rig.ts (climb until a step fails, bisect to 5 %); a SIP step also
// fails when sipp reports a failed call, or when one listener of ours (every call's SDP names its
// port; each call has its own SSRC) hears fewer streams than calls or, in the window, a gap of
// more than 60 ms before a packet of the agent's voice: what a caller hears as a break, as a
// WebSocket step fails on a frame of the agent's voice sent after its play time. Gaps before the
// line's silence packets (the agent quiet) are counted and printed but do not fail a step: the
// caller's jitter buffer plays them as the silence they are, and a WebSocket session, which sends
// nothing while the agent is quiet, could not be failed for the same pause of the server. The SIP calls' voice-to-voice is read from their
// timelines after the step, and sipp's own CPU over the window (it runs on the server's cores).
// Printed beside the two ceilings: SIP ÷ WebSocket calls held per core;
// call setup (sipp's -trace_rtt: each call's INVITE to its 200 OK, the scenario's rtd) and the
// RFC 3550 interarrival jitter of what Voxflow sends, p99 over the calls, both of the 20-call
// step (or the first, if the ladder stopped before 20).
// Last, 100 calls placed at once (all started within a second, each about 8 s of a question and
// the agent's answer): every call completed by sipp, one session each, every session ended, and
// each billed once (the account's balance down by exactly the sum of the sessions' charges).
// VOXFLOW_BENCH_ONLY=hundred runs that part alone.
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { setPriority, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { alawRtpPcap } from '../support/rtp-pcap.ts';
import { padWithSilence, synthesizeSpeech } from '../support/speech.ts';
import { percentile, type BenchRow } from './bench-kit.ts';
import { ladderStepSeconds, ladderToCeiling, loadNow, measureStep, startLoadRig, type LoadRig, type StepResult } from './load-rig.ts';
import { pacedWebSocketStep } from './phone.bench.ts';
import { processShare, processTicks } from './thread-cpu.ts';

// As test/support/sip-rig.ts has them (it cannot be imported outside vitest).
const SIPP = '/usr/bin/sipp';
const FIXTURES = fileURLToPath(new URL('../phone/sip/fixtures/', import.meta.url));
const GAP_MS = 60;
const CYCLE_MS = 8000;

interface CallStream {
  last: number;
  lastTimestamp: number;
  jitter: number;
  packets: number;
  /** Gaps before a packet of the agent's voice: a break the caller hears. */
  gaps: number;
  /** Gaps before a packet of the line's silence (the agent quiet). */
  quietGaps: number;
}

/** A packet of nothing but G.711 silence (μ-law 0xff, A-law 0xd5): the line with the agent quiet. */
function lineSilence(data: Buffer): boolean {
  const silence = (data[1]! & 0x7f) === 8 ? 0xd5 : 0xff;
  for (let i = 12; i < data.length; i++) if (data[i] !== silence) return false;
  return true;
}

/** Listens to every call's RTP on one port, per SSRC. */
export async function rtpListener() {
  const socket = createSocket('udp4');
  await new Promise<void>((done) => socket.bind(0, '127.0.0.1', done));
  let streams = new Map<number, CallStream>();
  socket.on('message', (data) => {
    if (data.length < 12) return;
    const now = performance.now();
    const ssrc = data.readUInt32BE(8);
    const timestamp = data.readUInt32BE(4);
    const stream = streams.get(ssrc);
    if (!stream) {
      streams.set(ssrc, { last: now, lastTimestamp: timestamp, jitter: 0, packets: 1, gaps: 0, quietGaps: 0 });
      return;
    }
    // RFC 3550 A.8: the difference of transit times, in ms (8 kHz timestamps).
    const d = now - stream.last - ((timestamp - stream.lastTimestamp) >>> 0) / 8;
    stream.jitter += (Math.abs(d) - stream.jitter) / 16;
    if (now - stream.last > GAP_MS) {
      if (lineSilence(data)) stream.quietGaps++;
      else stream.gaps++;
    }
    stream.last = now;
    stream.lastTimestamp = timestamp;
    stream.packets++;
  });
  return {
    port: socket.address().port,
    /** What was heard since the last call, and a fresh start. */
    take(): CallStream[] {
      const heard = [...streams.values()];
      streams = new Map();
      return heard;
    },
    close: () => new Promise<void>((done) => socket.close(() => done())),
  };
}

interface SippResult {
  code: number | null;
  output: string;
  /** Each call's INVITE to 200 OK, in ms (sipp's response time of the scenario's rtd). */
  setupMs: number[];
}

/**
 * The caller's side of a bench call, in `dir`: an A-law RTP stream (a pcap sipp plays) of the
 * WebSocket callers' question and cycle, long enough for `callMs`, and basic-call.xml with its
 * listening, talking and pauses replaced by that stream, then the BYE.
 */
export async function benchCall(dir: string, callMs: number): Promise<string> {
  const question = await synthesizeSpeech('Is it something you can eat?', { sampleRate: 8000 });
  const cycle = padWithSilence(question, 200, CYCLE_MS - 200 - Math.round((question.length / 8000) * 1000), 8000);
  const frames = Math.ceil(callMs / 20);
  const stream = new Int16Array(frames * 160);
  for (let at = 0; at < stream.length; at += cycle.length) stream.set(cycle.subarray(0, Math.min(cycle.length, stream.length - at)), at);
  const pcap = alawRtpPcap(stream);
  const pcapPath = join(dir, 'caller.pcap');
  await writeFile(pcapPath, pcap);
  const basic = await readFile(resolve(FIXTURES, 'basic-call.xml'), 'utf8');
  const from = basic.indexOf('<pause milliseconds="6000"/>');
  const to = basic.indexOf('<pause milliseconds="11000"/>') + '<pause milliseconds="11000"/>'.length;
  if (from < 0 || to < from) throw new Error('basic-call.xml no longer has the pauses this bench replaces');
  const scenario = `${basic.slice(0, from)}<nop>
    <action>
      <exec play_pcap_audio="${pcapPath}"/>
    </action>
  </nop>
  <pause milliseconds="${frames * 20}"/>${basic.slice(to)}`;
  const scenarioPath = join(dir, 'bench-call.xml');
  await writeFile(scenarioPath, scenario);
  return scenarioPath;
}

/** `calls` calls of `scenario`, their starts spread over `spreadMs` (one cycle); sipp at nice 10 (`started` is told its pid). */
export async function runSipp(scenario: string, calls: number, port: number, rtpPort: number, started?: (pid: number) => void, spreadMs = CYCLE_MS): Promise<SippResult> {
  const dir = await mkdtemp(join(tmpdir(), 'voxflow-bench-sipp-'));
  const child = spawn(SIPP, [
    '-sf', scenario,
    '-s', '1000', `127.0.0.1:${port}`,
    '-i', '127.0.0.1', '-mi', '127.0.0.1', '-mp', String(20_000 + Math.floor(Math.random() * 10_000) * 2),
    '-m', String(calls), '-l', String(calls), '-r', String(calls), '-rp', String(spreadMs),
    '-nostdin', '-timeout', '180s', '-timeout_error',
    '-trace_rtt', '-rtt_freq', '1',
    '-set', 'rtpport', String(rtpPort),
  ], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  started?.(child.pid!);
  try {
    setPriority(child.pid!, 10);
  } catch {
    // not permitted here: it competes at the same priority
  }
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const code = await new Promise<number | null>((done) => child.once('exit', (exit) => done(exit)));
  const setupMs: number[] = [];
  try {
    for (const file of (await readdir(dir)).filter((f) => f.endsWith('_rtt.csv'))) {
      // Date_ms;response_time_ms;rtd_no
      for (const line of (await readFile(join(dir, file), 'utf8')).split('\n')) {
        const value = Number(line.split(';')[1]);
        if (/^\d/.test(line) && Number.isFinite(value)) setupMs.push(value);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return { code, output, setupMs: setupMs.sort((a, b) => a - b) };
}

/** The engine's voice_to_voice_ms of the SIP calls created since `fromMs`, for turns in the window. */
async function sipVoiceToVoice(rig: LoadRig, fromMs: number, window: { from: number; to: number }): Promise<number[]> {
  const sessions = await rig.server.app.services.store.sessions.listRecent(rig.accountId, 1000, { createdFrom: Math.floor(fromMs / 1000) });
  const values: number[] = [];
  for (const session of sessions.filter((s) => s.transport === 'sip')) {
    const detail = await rig.server.request('GET', `/v1/sessions/${session.id}`, { apiKey: rig.apiKey });
    for (const m of (detail.body?.metrics ?? []) as Array<{ at: number; voice_to_voice_ms?: number | null }>) {
      if (typeof m.voice_to_voice_ms === 'number' && m.at * 1000 >= window.from && m.at * 1000 <= window.to) values.push(m.voice_to_voice_ms);
    }
  }
  return values;
}

interface SipStepFigures {
  calls: number;
  setupMs: number[];
  jitterP99: number;
  load: string;
}

/** The bench's server with a SIP listener on UDP and number 1000 ringing the rig's flow; the listener's port. */
export async function startSipRig(): Promise<{ rig: LoadRig; port: number }> {
  const rig = await startLoadRig({ tts: 'openai', config: { sip: { listen: ['udp:127.0.0.1:0'], rtpPorts: '0' } } });
  try {
    const port = rig.server.app.services.sipListening.find((l) => l.protocol === 'udp')!.port;
    const saved = await rig.server.request('PATCH', '/v1/providers', { jwt: rig.jwt, body: { sip_allowed_sources: '127.0.0.1' } });
    if (saved.status !== 200) throw new Error(`sip sources: ${saved.status} ${saved.text}`);
    const bound = await rig.server.request('POST', '/v1/phone-numbers', { jwt: rig.jwt, body: { carrier: 'sip', number: '1000', flow_id: rig.flowId, label: 'bench' } });
    if (bound.status !== 201) throw new Error(`sip number: ${bound.status} ${bound.text}`);
    return { rig, port };
  } catch (error) {
    await rig.close();
    throw error;
  }
}

export async function run(): Promise<BenchRow[]> {
  const seconds = ladderStepSeconds();
  // Every call is up 8 s after the first started; 3 s of warm-up, then the window; the first
  // call still talks until a second after it.
  const callMs = CYCLE_MS + 3000 + seconds * 1000 + 1000;
  const dir = await mkdtemp(join(tmpdir(), 'voxflow-bench-sip-'));
  const { rig, port } = await startSipRig().catch(async (error: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw error;
  });
  const ear = await rtpListener();
  const rows: BenchRow[] = [];
  try {
    if (process.env.VOXFLOW_BENCH_ONLY === 'hundred') {
      rows.push(await hundredAtOnce(rig, port, ear, dir));
      return rows;
    }
    const scenario = await benchCall(dir, callMs);

    const ws = await ladderToCeiling({
      label: 'WebSocket sessions, 20 ms frames',
      stepHow: `${seconds} s (measured from 3 s after all connected), callers sending one 20 ms frame every 20 ms, hosted-style TTS`,
      heldHow: 'hosted-style TTS (fake OpenAI speech in the fakes process)',
      runStep: (sessions) => pacedWebSocketStep(rig, sessions, seconds),
    });

    const figures: SipStepFigures[] = [];
    const sipStep = async (calls: number): Promise<StepResult> => {
      const load = loadNow();
      const stepFrom = Date.now();
      let sipp: Promise<SippResult> | null = null;
      let sippPid = 0;
      let heard: CallStream[] = [];
      let sippShare = '';
      const window = { from: 0, to: 0 };
      const r = await measureStep(async () => {
        sipp = runSipp(scenario, calls, port, ear.port, (pid) => (sippPid = pid));
        await new Promise((done) => setTimeout(done, CYCLE_MS + 3000));
        ear.take();
        window.from = Date.now();
        // sipp shares the server's cores (at nice 10): what it used over the window says whether
        // it could have been what starved the server.
        const sippBefore = processTicks(sippPid);
        return async () => {
          await new Promise((done) => setTimeout(done, seconds * 1000));
          window.to = Date.now();
          sippShare = processShare(sippBefore, processTicks(sippPid), Date.now() - window.from);
          heard = ear.take();
          return { healthy: true, voiceToVoice: [], extra: '' };
        };
      });
      const done = await sipp!;
      await new Promise((wait) => setTimeout(wait, 2500)); // the calls' timelines written
      const jitters = heard.map((s) => s.jitter).sort((a, b) => a - b);
      const gaps = heard.reduce((sum, s) => sum + s.gaps, 0);
      const quietGaps = heard.reduce((sum, s) => sum + s.quietGaps, 0);
      const packets = heard.reduce((sum, s) => sum + s.packets, 0);
      const jitterP99 = percentile(jitters, 99);
      figures.push({ calls, setupMs: done.setupMs, jitterP99, load });
      const failed = done.code === 0 ? '' : `; sipp exited ${done.code}: ${done.output.split('\n').filter((l) => /Failed|Successful|error/i.test(l)).slice(-4).join('; ')}`;
      return {
        ...r,
        healthy: done.code === 0 && heard.length >= calls && gaps === 0,
        voiceToVoice: await sipVoiceToVoice(rig, stepFrom, window),
        extra: `${heard.length} RTP streams heard, ${packets} packets, ${gaps} gaps > ${GAP_MS} ms before the agent's voice (${quietGaps} before silence); jitter p50 ${percentile(jitters, 50)?.toFixed(2) ?? '-'} ms, max ${(jitters.at(-1) ?? 0).toFixed(2)} ms; setup p50 ${percentile(done.setupMs, 50)?.toFixed(1) ?? '-'} ms; sipp ${sippShare} of a core${failed}`,
      };
    };
    const sip = await ladderToCeiling({
      label: 'SIP calls, A-law 8 kHz',
      stepHow: `sipp, calls started over 8 s, then 3 s, then a ${seconds} s window; callers sending one 20 ms RTP packet every 20 ms; RTP heard by one listener per SSRC (gaps: > ${GAP_MS} ms between packets of a call, before a packet of the agent's voice; jitter: RFC 3550 interarrival, per call); hosted-style TTS`,
      heldHow: 'also every call completed, every call heard, no RTP gap before the agent\'s voice; hosted-style TTS (fake OpenAI speech in the fakes process)',
      runStep: sipStep,
    });
    rows.push(...ws.rows, ...sip.rows, {
      name: 'SIP ÷ WebSocket: held per core',
      value:
        ws.held === 0
          ? `none: the WebSocket ladder held no step (${sip.held} SIP calls held); on a loaded machine the first step's frames are late whatever the path`
          : `${(sip.perCore / ws.perCore).toFixed(2)} (${sip.perCore.toFixed(1)} vs ${ws.perCore.toFixed(1)} per core; ${sip.held} vs ${ws.held} held)`,
      target: '≥ 0.9',
      how: 'the two ladders above, same run, same server, same pacing and question',
    });
    const at20 = figures.find((f) => f.calls === 20) ?? figures[0];
    rows.push({
      name: 'SIP call setup, INVITE → 200 OK',
      value: at20 && at20.setupMs.length > 0 ? `${percentile(at20.setupMs, 50)!.toFixed(1)} ms p50, ${percentile(at20.setupMs, 95)!.toFixed(1)} ms p95 (${at20.calls} calls; load average before ${at20.load})` : 'not measured (sipp wrote no response times)',
      target: 'p50 ≤ 20 ms',
      how: "sipp -trace_rtt: each call's time from its INVITE to the 200 OK (the scenario's rtd), over the 20-call step's calls (the first step's if there was none)",
    });
    rows.push({
      name: 'RTP jitter of what Voxflow sends',
      value: at20 && !Number.isNaN(at20.jitterP99) ? `${at20.jitterP99.toFixed(2)} ms p99 over ${at20.calls} calls (load average before ${at20.load})` : 'not measured',
      target: 'p99 ≤ 5 ms at 20 calls',
      how: 'RFC 3550 interarrival jitter of each call over the step\'s window, as one listener on loopback heard it, p99 over the calls of the 20-call step (the first step\'s if there was none)',
    });
    rows.push(await hundredAtOnce(rig, port, ear, dir));
  } finally {
    await ear.close();
    await rig.close();
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}

/**
 * 100 SIP calls placed within one second, each about 8 s long (the question, the agent's answer,
 * then the caller's BYE): what a caller or the account's owner would notice going wrong under a
 * burst: a call refused or dropped (sipp counts it failed), a call with no session or two, a session
 * that never ends, a call not billed or billed twice.
 */
async function hundredAtOnce(rig: LoadRig, port: number, ear: Awaited<ReturnType<typeof rtpListener>>, dir: string): Promise<BenchRow> {
  const calls = 100;
  const load = loadNow();
  const callDir = join(dir, 'hundred');
  await mkdir(callDir);
  const scenario = await benchCall(callDir, CYCLE_MS);
  const balance = async () => (await rig.server.request('GET', '/v1/credits/balance', { apiKey: rig.apiKey })).body.balance_usd_cents as number;
  const credit = await balance();
  const from = Date.now();
  ear.take();
  const done = await runSipp(scenario, calls, port, ear.port, undefined, 1000);
  const heard = ear.take().length;
  type Row = { id: string; transport: string; status: string; carrier_call_id?: string | null; credits_charged_usd_cents?: number };
  const since = async (): Promise<Row[]> => {
    const recent = await rig.server.app.services.store.sessions.listRecent(rig.accountId, 1000, { createdFrom: Math.floor(from / 1000) - 1 });
    const ids = recent.filter((s) => s.transport === 'sip').map((s) => s.id);
    return Promise.all(ids.map(async (id) => (await rig.server.request('GET', `/v1/sessions/${id}`, { apiKey: rig.apiKey })).body as Row));
  };
  // Every session ends once its BYE is in; give the last ones a few seconds.
  let sessions = await since();
  for (const until = Date.now() + 30_000; sessions.some((s) => s.status !== 'ended') && Date.now() < until; sessions = await since()) {
    await new Promise((wait) => setTimeout(wait, 1000));
  }
  const completed = /Successful call\s*\|[^|]*\|\s*(\d+)/.exec(done.output)?.[1];
  const callIds = new Set(sessions.map((s) => s.carrier_call_id));
  const ended = sessions.filter((s) => s.status === 'ended').length;
  const charged = sessions.filter((s) => (s.credits_charged_usd_cents ?? 0) > 0).length;
  const sum = sessions.reduce((total, s) => total + (s.credits_charged_usd_cents ?? 0), 0);
  const drop = credit - (await balance());
  const allWell = done.code === 0 && sessions.length === calls && callIds.size === calls && ended === calls && charged === calls && drop === sum;
  return {
    name: `SIP: ${calls} calls placed within a second`,
    value: `${allWell ? 'none lost, each billed once' : 'NOT MET'}: sipp exited ${done.code}${completed ? `, ${completed} calls successful` : ''}; ${sessions.length} SIP sessions for ${callIds.size} call ids, ${ended} ended, ${charged} charged; the balance down ${drop} ¢, the sessions' charges ${sum} ¢; ${heard} calls' RTP heard (load average before ${load})`,
    target: 'every call completed, one session each, each ended and billed once',
    how: `sipp -r ${calls} -rp 1000, each call ${CYCLE_MS / 1000} s of the bench's A-law question and silence then BYE, hosted-style TTS; sessions and charges read from the API after the calls`,
  };
}
