// The soaks: the crash loops and deep property runs that `npm test` runs once or at half strength
// (it must stay within a few minutes on two cores). Each row runs test files of the suite through
// `npm test`'s own runner (its temp folder and leftover check included) with the knob raised, and
// says whether they all passed. `npm run bench -- soaks` runs these alone; they take a while.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BenchRow } from './bench-kit.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Soak {
  name: string;
  files: string[];
  env: Record<string, string>;
  /** What `npm test` does instead. */
  inTests: string;
}

const SOAKS: Soak[] = [
  {
    name: 'server SIGKILLed at random moments while four clients write, 10 kills',
    files: ['test/server/crash-kill-restart.test.ts'],
    env: { VOXFLOW_CRASH_ROUNDS: '10' },
    inTests: '1 kill',
  },
  {
    name: 'embedded store writer SIGKILLed 0–350 ms after a write, 100 kills',
    files: ['test/store/child-processes/crash-kill.test.ts'],
    env: { VOXFLOW_CRASH_ROUNDS: '100' },
    inTests: '5 kills',
  },
  {
    name: 'forced exit while the voice model loads, 20 times',
    files: ['test/server/close-never-settles.test.ts'],
    env: { VOXFLOW_CRASH_ROUNDS: '20' },
    inTests: 'once',
  },
  {
    name: 'every fast-check property at 5,000 cases (or its scaled count)',
    files: ['test/flow/', 'test/transports/carriers/', 'test/renderer/features/talk/'],
    env: { VOXFLOW_FC_RUNS: '5000' },
    inTests: '250 cases',
  },
];

function runTests(soak: Soak): Promise<{ code: number; summary: string; seconds: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['scripts/run-tests.mjs', ...soak.files], { cwd: ROOT, env: { ...process.env, ...soak.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      const summary = /(\d+ passed, \d+ failed, \d+ skipped)/.exec(output)?.[1] ?? 'no summary line';
      if (code !== 0) process.stderr.write(`${soak.name} failed:\n${output.slice(-4000)}\n`);
      resolve({ code: code ?? 1, summary, seconds: (performance.now() - started) / 1000 });
    }),
  );
}

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const soak of SOAKS) {
    const { code, summary, seconds } = await runTests(soak);
    rows.push({
      name: soak.name,
      value: `${code === 0 ? 'passed' : 'FAILED'}: ${summary}`,
      target: 'all pass',
      how: `${soak.files.join(' ')} with ${Object.entries(soak.env).map(([k, v]) => `${k}=${v}`).join(' ')} (npm test: ${soak.inTests}); ${seconds.toFixed(0)} s`,
    });
  }
  return rows;
}
