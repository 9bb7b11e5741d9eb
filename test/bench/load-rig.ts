// The server the load benches measure: provider fakes in a child process of their own (so their
// work is not counted against the server's core), an account with ample credit, and a flow.
import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg, setPriority } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface, type Interface } from 'node:readline';
import type { ConfigInput } from '../../server/config.ts';
import { AudioOut } from '../../server/engine/audio-out.ts';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';
import { p50p95, percentile, type BenchRow } from './bench-kit.ts';

export interface LoadRig {
  server: TestServer;
  apiKey: string;
  /** The account's sign-in token (settings the API key may not change: providers, phone numbers). */
  jwt: string;
  accountId: string;
  flowId: string;
  close(): Promise<void>;
}

/** Lines a child process prints, one at a time. */
export function lines(child: ChildProcess): { next(): Promise<string> } {
  const reader: Interface = createInterface({ input: child.stdout! });
  const queue: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  reader.on('line', (line) => (waiting.length > 0 ? waiting.shift()!(line) : queue.push(line)));
  return { next: () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiting.push(resolve))) };
}

/**
 * A helper process of the load benches: the callers or the provider fakes. They stand in for other
 * machines (the callers' phones, a hosted provider), yet here they share the server's two cores,
 * so they run at a lower priority (nice 10): when the server needs a core it gets it, as it would
 * on a machine of its own. They still get every cycle the server leaves idle. A process that
 * only times the server (`nice` 0) stays at the server's priority: at nice 10 its own wake-ups
 * would wait behind the other helpers' work and be counted as the server's delay.
 */
export function spawnTs(file: string, args: string[] = [], nice = 10): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL(file, import.meta.url).pathname, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    if (nice !== 0) setPriority(child.pid!, nice);
  } catch {
    // not permitted here: they compete at the same priority
  }
  return child;
}

/**
 * `tts: 'flite'` synthesizes in the server process (embedded TTS, on its worker thread);
 * `tts: 'openai'` fetches speech from the fake in the fakes' process, as a hosted TTS would,
 * so the figure is the engine's own cost.
 */
export async function startLoadRig(options: { tts?: 'flite' | 'openai'; config?: ConfigInput } = {}): Promise<LoadRig> {
  const fakes = spawnTs('./fake-providers-process.ts');
  const urls = JSON.parse(await lines(fakes).next()) as { openai: string; deepgram: string };
  const server = await startTestServer({
    ...options.config,
    // One account holds every session of a bench: no per-account limit.
    engine: { maxSessions: 500, maxPeerConnections: 500, sessionsPerAccount: 0 },
    providers: {
      stt: { provider: 'deepgram', apiKey: 'dg', baseUrl: urls.deepgram },
      llm: { provider: 'openai', apiKey: 'sk', baseUrl: urls.openai },
      tts: options.tts === 'openai' ? { provider: 'openai', apiKey: 'sk', baseUrl: urls.openai } : { provider: 'flite' },
    },
  }, { voice: true });
  const account = await createAccount(server);
  const flowId = await createFlow(server, account.apiKey);
  // Enough credit for every minute of the run: the benches measure the engine, not the ledger.
  const { store } = server.app.services;
  const accountId = (await store.accounts.findByEmail(account.email))!.id;
  await store.credits.grant(accountId, 1_000_000, 'bench', 'bench-grant');
  return {
    server,
    apiKey: account.apiKey,
    jwt: account.jwt,
    accountId,
    flowId,
    async close() {
      await server.close();
      fakes.kill();
    },
  };
}

/** What the server process showed over one step's measuring window. */
export interface StepResult {
  /** Callers connected and still fine at the end. */
  healthy: boolean;
  lagP99Ms: number;
  lagMaxMs: number;
  late: number;
  underruns: number;
  /** Cores the server process used (every thread), over the window. */
  cores: number;
  /** voice_to_voice_ms of the callers' turns in the window. */
  voiceToVoice: number[];
  /** What else the step wants printed (e.g. frames or packets the callers received). */
  extra: string;
}

/**
 * Watches the server process while `drive()` runs a step's callers through its measuring window:
 * event-loop delay, late and underrun frames, CPU. `drive` resolves when the window starts and
 * returns a promise of the callers' verdict at its end.
 */
export async function measureStep(drive: () => Promise<() => Promise<{ healthy: boolean; voiceToVoice: number[]; extra: string }>>): Promise<StepResult> {
  const windowEnd = await drive();
  const lag = monitorEventLoopDelay({ resolution: 5 });
  const lateBefore = AudioOut.lateFrames;
  const underrunsBefore = AudioOut.underrunFrames;
  const cpuBefore = process.cpuUsage();
  const windowStart = performance.now();
  lag.enable();
  const verdict = await windowEnd();
  lag.disable();
  const cpu = process.cpuUsage(cpuBefore);
  return {
    healthy: verdict.healthy,
    lagP99Ms: lag.percentile(99) / 1e6,
    lagMaxMs: lag.max / 1e6,
    late: AudioOut.lateFrames - lateBefore,
    underruns: AudioOut.underrunFrames - underrunsBefore,
    cores: (cpu.user + cpu.system) / 1000 / (performance.now() - windowStart),
    voiceToVoice: verdict.voiceToVoice,
    extra: verdict.extra,
  };
}

/**
 * Seconds of a ladder's step: VOXFLOW_BENCH_STEP_SECONDS, else VOXFLOW_BENCH_SECONDS, else 10 (a
 * ladder to the ceiling runs 15–20 steps).
 */
export function ladderStepSeconds(): number {
  return Number(process.env.VOXFLOW_BENCH_STEP_SECONDS ?? process.env.VOXFLOW_BENCH_SECONDS ?? 10);
}

/** The machine's load average (1, 5, 15 min) now, for a row: a step another process loaded says little. */
export function loadNow(): string {
  return loadavg().map((l) => l.toFixed(2)).join(' ');
}

/** The counts a ladder climbs: 5, 10, then by 10 to 100, then by 20, up to `max`. */
export function* climbSteps(max: number): Generator<number> {
  yield 5;
  for (let n = 10; n <= Math.min(100, max); n += 10) yield n;
  for (let n = 120; n <= max; n += 20) yield n;
}

export interface Ceiling {
  rows: BenchRow[];
  /** The highest count held (0: not even the first step). */
  held: number;
  /** Cores the server used at that count. */
  heldCores: number;
  /** held ÷ the larger of 1 and heldCores. */
  perCore: number;
  /** The lowest count that failed (0: none did, up to the ladder's top). */
  failedAt: number;
}

/**
 * Finds the most sessions the server holds: climbs (climbSteps) until a step fails the criterion
 * of stepJudge (event-loop delay p99 ≥ 20 ms, a late or underrun frame, a caller that could not
 * connect or was not fine at the end, or voice-to-voice p50 more than 20 % above the first
 * step's), then bisects between the last count held and the first that failed until they are
 * within 5 % of each other (at least 1 apart). Now and then this machine (a VM: /proc/stat counts
 * steal time) stops the server for 40–140 ms at light load: a CPU profile over such a pause shows
 * the main thread idle with its 5 ms timer overdue, or no samples at all. So a failed count is run
 * once more, and is held if the repeat passes; both rows are printed. Every row carries the load
 * average before its step, and each is also written to stderr as it comes (a ladder runs for
 * minutes).
 */
export async function ladderToCeiling(options: {
  label: string;
  /** How one step is run, for the rows' last column. */
  stepHow: string;
  /** What the held row adds to its last column (the voice, the path). */
  heldHow: string;
  target?: string;
  /** The top of the climb (VOXFLOW_BENCH_LADDER_MAX, else 480: the rig admits 500 sessions). */
  max?: number;
  runStep: (sessions: number) => Promise<StepResult>;
}): Promise<Ceiling> {
  const { label, runStep } = options;
  const judge = stepJudge(label, options.stepHow);
  const rows: BenchRow[] = [];
  let held = 0;
  let heldCores = 0;
  let failedAt = 0;
  const tryCount = async (sessions: number): Promise<boolean> => {
    for (let attempt = 1; attempt <= 2; attempt++) {
      const load = loadNow();
      const verdict = judge(sessions, attempt, await runStep(sessions));
      verdict.row.value += `; load average before ${load}`;
      rows.push(verdict.row);
      process.stderr.write(`  ${verdict.row.name}: ${verdict.row.value}\n`);
      if (verdict.passed) {
        if (sessions > held) [held, heldCores] = [sessions, verdict.cores];
        return true;
      }
    }
    if (failedAt === 0 || sessions < failedAt) failedAt = sessions;
    return false;
  };
  for (const sessions of climbSteps(options.max ?? Number(process.env.VOXFLOW_BENCH_LADDER_MAX ?? 480))) {
    if (!(await tryCount(sessions))) break;
  }
  // Bisect: the ceiling lies between the last count held and the first that failed.
  while (held > 0 && failedAt > 0 && failedAt - held > Math.max(1, Math.round(held * 0.05))) {
    await tryCount(Math.round((held + failedAt) / 2));
  }
  const perCore = held / Math.max(heldCores, 1);
  rows.push(heldRow(label, held, heldCores, options.heldHow, options.target, failedAt));
  process.stderr.write(`  ${rows.at(-1)!.name}: ${rows.at(-1)!.value}\n`);
  return { rows, held, heldCores, perCore, failedAt };
}

/** ladderToCeiling's rows alone. */
export async function sessionsHeld(
  label: string,
  runStep: (sessions: number) => Promise<StepResult>,
  how: { step: string; held: string; target?: string },
): Promise<BenchRow[]> {
  return (await ladderToCeiling({ label, stepHow: how.step, heldHow: how.held, target: how.target, runStep })).rows;
}

/**
 * The criterion of one step (the first step judged with turns in its window sets the
 * voice-to-voice baseline).
 */
export function stepJudge(label: string, stepHow: string): (sessions: number, attempt: number, r: StepResult) => { passed: boolean; cores: number; row: BenchRow } {
  let baseline = NaN; // voice-to-voice p50 of the first step
  return (sessions, attempt, r) => {
    const v2v = r.voiceToVoice.length > 0 ? percentile([...r.voiceToVoice].sort((a, b) => a - b), 50) : NaN;
    if (Number.isNaN(baseline)) baseline = v2v;
    // A step with no turns while the first had some fails (no reply came); a bench whose callers
    // report no turns at all is judged without this criterion.
    const repliesInTime = Number.isNaN(baseline) || v2v <= baseline * 1.2;
    const passed = r.healthy && r.lagP99Ms < 20 && r.late === 0 && r.underruns === 0 && repliesInTime;
    return {
      passed,
      cores: r.cores,
      row: {
        name: `${sessions} ${label}${attempt === 2 ? ' (repeat)' : ''}`,
        value: `lag p99 ${r.lagP99Ms.toFixed(1)} ms, max ${r.lagMaxMs.toFixed(1)} ms; ${r.late} late, ${r.underruns} underrun frames; voice-to-voice ${p50p95(r.voiceToVoice)}; ${(r.cores * 100).toFixed(0)} % CPU${r.extra ? `; ${r.extra}` : ''}${passed ? '' : ' ✗'}`,
        how: `${stepHow}; late = sent after its play time, underrun = mid-reply audio not ready by then; CPU of every server thread, in cores`,
      },
    };
  };
}

export function heldRow(label: string, held: number, heldCores: number, heldHow: string, target = '≥ 15 per core', failedAt = 0): BenchRow {
  const ceiling = failedAt === 0 ? 'no step failed up to the top of the ladder' : `${failedAt} failed`;
  return {
    name: `${label}: held`,
    value: held === 0 ? `0 (${ceiling})` : `${held}, using ${(heldCores * 100).toFixed(0)} % of a core: ${(held / Math.max(heldCores, 1)).toFixed(1)} per core (${ceiling})`,
    target,
    how: `highest count above with lag p99 < 20 ms, no late frames, no underruns and voice-to-voice p50 within 20% of the first step's, climbing 5, 10, by 10 to 100, by 20, then bisecting to 5 %; per core = held ÷ the larger of 1 and the cores the server process used; ${heldHow}`,
  };
}
