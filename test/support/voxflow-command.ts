// Runs the `voxflow` command (`voxflow test`, `voxflow replay`) as a CI job runs it: a child
// process with only PATH and HOME from the environment, its exit code and both streams kept.
//
// Which program: the command's code is server/main.ts either way. `VOXFLOW_BIN` is the package's
// bin (scripts/voxflow.mjs), which loads that through tsx, as `npx voxflow` does; each file runs
// one case through it, so the bin itself stays tested. The other cases run the same code from this
// run's bundle (server-bundle.ts), which `npm run serve` runs too: a run through tsx spent about
// 1 s more CPU loading the sources (1.5–1.6 s against 0.6–0.7 s for a scripted suite, load
// average 20), paid 18 times a run by the three files that run the command.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { serverBundle } from './server-bundle.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The package's bin, through tsx, as `npx voxflow` runs it. */
export const VOXFLOW_BIN = 'scripts/voxflow.mjs';

export interface VoxflowRun {
  /** null when the run was killed for outlasting `killAfterMs`. */
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `voxflow <args>`; a run still going after `killAfterMs` is killed (its code then reads
 * null), so a hung command fails its test instead of holding the suite.
 */
export function voxflow(args: string[], options: { env?: Record<string, string>; killAfterMs?: number; entry?: string } = {}): Promise<VoxflowRun> {
  const entry = options.entry ?? serverBundle();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const killAfterMs = options.killAfterMs ?? 90_000;
    const timer = setTimeout(() => {
      stderr += `(killed: still running after ${killAfterMs / 1000} s)`;
      child.kill('SIGKILL');
    }, killAfterMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
