// SIP calls at once (`npm run bench -- sip`): sipp places N concurrent calls (`-l N`, started at N a
// second with `-r`) of basic-call.xml (the caller speaks 9 s of A-law speech, then hangs up) to the
// server's UDP listener, for steps of 10, 20, 25, 50 and 100 calls (VOXFLOW_BENCH_SIP_STEPS to
// change them; VOXFLOW_BENCH_QUICK=1 runs 2 and 5 only, a short try on a loaded machine). Call
// setup is sipp's own measure of each call's INVITE to its 200 OK (-trace_rtt, the scenario's
// rtd), p50 over the calls of a step; the RTP jitter row is the p99 over the calls of the 20-call
// step (or of the largest step held, in quick mode). Over each step's window, the server process's event-loop delay, late and underrun agent
// frames and CPU (load-rig.ts), and what a listener of ours hears of every call's RTP (all the
// calls' SDP names one UDP port, each call its own SSRC): packets, gaps (more than 60 ms between
// two packets of a call, where a jitter buffer would run dry) and the RFC 3550 interarrival
// jitter of each call. The ladder stops at the first step that breaks (sipp reporting a failed
// call, event-loop p99 ≥ 20 ms, a late or underrun frame, or an RTP gap) and prints it, with the
// machine's load average when it ran: on a shared machine, a step that breaks under another's
// load says little. Each step is run once (the big steps load the machine for everyone).
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { percentile, type BenchRow } from './bench-kit.ts';
import { measureStep, startLoadRig } from './load-rig.ts';

// As test/support/sip-rig.ts has them (it cannot be imported outside vitest).
const SIPP = '/usr/bin/sipp';
const FIXTURES = fileURLToPath(new URL('../phone/sip/fixtures/', import.meta.url));
const QUICK = process.env.VOXFLOW_BENCH_QUICK === '1';
const STEPS = (process.env.VOXFLOW_BENCH_SIP_STEPS ?? (QUICK ? '2,5' : '10,20,25,50,100')).split(',').map(Number).filter((n) => n > 0);
const GAP_MS = 60;

interface CallStream {
  last: number;
  lastTimestamp: number;
  jitter: number;
  packets: number;
  gaps: number;
}

/** Listens to every call's RTP on one port, per SSRC. */
async function rtpListener() {
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
      streams.set(ssrc, { last: now, lastTimestamp: timestamp, jitter: 0, packets: 1, gaps: 0 });
      return;
    }
    // RFC 3550 A.8: the difference of transit times, in ms (8 kHz timestamps).
    const d = now - stream.last - ((timestamp - stream.lastTimestamp) >>> 0) / 8;
    stream.jitter += (Math.abs(d) - stream.jitter) / 16;
    if (now - stream.last > GAP_MS) stream.gaps++;
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

async function runSipp(calls: number, port: number, rtpPort: number): Promise<SippResult> {
  const dir = await mkdtemp(join(tmpdir(), 'voxflow-bench-sipp-'));
  const child = spawn(SIPP, [
    '-sf', resolve(FIXTURES, 'basic-call.xml'),
    '-s', '1000', `127.0.0.1:${port}`,
    '-i', '127.0.0.1', '-mi', '127.0.0.1', '-mp', String(20_000 + Math.floor(Math.random() * 10_000) * 2),
    '-m', String(calls), '-l', String(calls), '-r', String(calls), '-rp', '1000',
    '-nostdin', '-timeout', '120s', '-timeout_error',
    '-trace_rtt', '-rtt_freq', '1',
    '-set', 'rtpport', String(rtpPort),
  ], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
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

export async function run(): Promise<BenchRow[]> {
  const rig = await startLoadRig({ tts: 'openai', config: { sip: { listen: ['udp:127.0.0.1:0'], rtpPorts: '0' } } });
  const ear = await rtpListener();
  const rows: BenchRow[] = [];
  try {
    const port = rig.server.app.services.sipListening.find((l) => l.protocol === 'udp')!.port;
    const saved = await rig.server.request('PATCH', '/v1/providers', { jwt: rig.jwt, body: { sip_allowed_sources: '127.0.0.1' } });
    if (saved.status !== 200) throw new Error(`sip sources: ${saved.status} ${saved.text}`);
    const bound = await rig.server.request('POST', '/v1/phone-numbers', { jwt: rig.jwt, body: { carrier: 'sip', number: '1000', flow_id: rig.flowId, label: 'bench' } });
    if (bound.status !== 201) throw new Error(`sip number: ${bound.status} ${bound.text}`);
    let held = 0;
    let broke: string | null = null;
    let jitterAt: { calls: number; p99: number | undefined; load: string } | null = null;
    let setup: { calls: number; p50: number | undefined; p95: number | undefined; load: string } | null = null;
    for (const calls of STEPS) {
      const load = loadavg().map((l) => l.toFixed(2)).join(' ');
      ear.take();
      let sipp: Promise<SippResult> | null = null;
      let setupMs: number[] = [];
      const r = await measureStep(async () => {
        sipp = runSipp(calls, port, ear.port);
        // The calls are all up after a second; the window is the rest of them.
        await new Promise((done) => setTimeout(done, 2_000));
        return async () => {
          const result = await sipp!;
          setupMs = result.setupMs;
          return { healthy: result.code === 0, voiceToVoice: [], extra: result.code === 0 ? '' : `sipp exited ${result.code}: ${result.output.split('\n').filter((l) => /Failed|Successful|error/i.test(l)).slice(-4).join('; ')}` };
        };
      });
      const heard = ear.take();
      const jitters = heard.map((s) => s.jitter).sort((a, b) => a - b);
      const gaps = heard.reduce((sum, s) => sum + s.gaps, 0);
      const packets = heard.reduce((sum, s) => sum + s.packets, 0);
      const passed = r.healthy && heard.length >= calls && r.lagP99Ms < 20 && r.late === 0 && r.underruns === 0 && gaps === 0;
      const jitterP99 = percentile(jitters, 99);
      if (calls === 20 || (QUICK && passed)) jitterAt = { calls, p99: jitterP99, load };
      if (setupMs.length > 0 && setup === null) setup = { calls, p50: percentile(setupMs, 50), p95: percentile(setupMs, 95), load };
      rows.push({
        name: `${calls} SIP calls at once`,
        value: `${heard.length} streams heard, ${packets} packets, ${gaps} gaps > ${GAP_MS} ms; jitter p50 ${percentile(jitters, 50)?.toFixed(2) ?? '-'} ms, max ${(jitters.at(-1) ?? 0).toFixed(2)} ms; lag p99 ${r.lagP99Ms.toFixed(1)} ms; ${r.late} late, ${r.underruns} underrun frames; ${(r.cores * 100).toFixed(0)} % CPU; load average before ${load}${r.extra ? `; ${r.extra}` : ''}${passed ? '' : ' ✗'}`,
        how: 'sipp basic-call.xml, -l/-r the count; RTP heard by one listener per SSRC (gaps: > 60 ms between packets of a call; jitter: RFC 3550 interarrival, per call); CPU of the server process; run once',
      });
      if (!passed) {
        broke = `${calls} calls (load average ${load})`;
        break;
      }
      held = calls;
    }
    rows.push({
      name: 'SIP calls held at once',
      value: `${held}${broke ? `; broke at ${broke}` : '; did not break within the steps'}`,
      target: '',
      how: 'the largest step with every call completed, no RTP gap, no late or underrun frame and event-loop p99 < 20 ms; the machine is shared, so the load average is printed with the step that broke',
    });
    rows.push({
      name: 'SIP call setup, INVITE → 200 OK',
      value: setup ? `${setup.p50?.toFixed(1) ?? '-'} ms p50, ${setup.p95?.toFixed(1) ?? '-'} ms p95 (${setup.calls} calls; load average before ${setup.load})` : 'not measured (sipp wrote no response times)',
      target: 'p50 ≤ 20 ms',
      how: "sipp -trace_rtt: each call's time from its INVITE to the 200 OK (basic-call.xml's rtd), over the first step's calls",
    });
    rows.push({
      name: 'RTP jitter of what Voxflow sends',
      value: jitterAt ? `${jitterAt.p99?.toFixed(2) ?? '-'} ms p99 over ${jitterAt.calls} calls (load average before ${jitterAt.load})` : 'not measured (no 20-call step ran)',
      target: 'p99 ≤ 5 ms at 20 calls',
      how: 'RFC 3550 interarrival jitter of each call, as one listener on loopback heard it, p99 over the calls of the step',
    });
  } finally {
    await ear.close();
    await rig.close();
  }
  return rows;
}
