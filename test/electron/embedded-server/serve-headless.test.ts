// `voxflow --serve` from the packaged app: the Electron argv is reduced to the server's flags,
// and those run the same headless command as `npm run serve` — same output, same exit codes,
// a graceful close on SIGTERM. Electron itself is not needed for any of it.
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseLaunchArguments } from '../../../electron/args.ts';
import { serveFromCommandLine, type ServeCommandIo } from '../../../server/serve.ts';
import { SNAPSHOT_FILE } from '../../../server/store/sqljs/database.ts';
import { LOCK_FILE } from '../../../server/store/sqljs/lockfile.ts';
import { serverBundle } from '../../support/server-bundle.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SERVING = /^Voxflow is serving at (http:\/\/127\.0\.0\.1:(\d+)) \(listening on http:\/\/127\.0\.0\.1:\2, data in (.+)\)\n$/m;
/** Only the flags configure the server: nothing leaks in from the test runner's environment. */
const ENV = { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(VOXFLOW_|OPENAI_API_KEY$|DEEPGRAM_API_KEY$)/.test(name))), VOXFLOW_LOG_LEVEL: 'silent' };

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function dataFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'voxflow-serve-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** What the packaged app on a Linux server would get for `voxflow --serve …`. */
function packagedArgv(...flags: string[]): string[] {
  return ['/opt/Voxflow/voxflow', '--no-sandbox', '--ozone-platform=headless', ...flags];
}

function serverArgvOf(argv: string[]): string[] {
  const launch = parseLaunchArguments(argv, { defaultApp: false });
  if (launch.kind !== 'serve') throw new Error(`expected headless mode for ${argv.join(' ')}`);
  return launch.serverArgv;
}

function fakeIo() {
  let stdout = '';
  let stderr = '';
  const signals = new EventEmitter();
  const exit = vi.fn<(code: number) => void>();
  const io: ServeCommandIo = { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), exit, signals };
  return { io, exit, signals, stdout: () => stdout, stderr: () => stderr };
}

describe('voxflow --serve in the packaged app', () => {
  it('serves /health at the URL it prints and, on SIGTERM, flushes the store and exits 0', async () => {
    const dataDir = await dataFolder();
    const fake = fakeIo();
    const command = await serveFromCommandLine(serverArgvOf(packagedArgv('--serve', '--port', '0', '--data-dir', dataDir)), ENV, fake.io);
    expect(command).not.toBeNull();
    cleanups.push(() => command!.server.close());
    const [, url, , announcedDir] = SERVING.exec(fake.stdout())!;
    expect(announcedDir).toBe(dataDir);
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', service: 'voxflow' });

    fake.signals.emit('SIGTERM');
    await vi.waitFor(() => expect(fake.exit).toHaveBeenCalledWith(0), { timeout: 10_000 });
    expect(fake.exit).toHaveBeenCalledTimes(1);
    expect(existsSync(join(dataDir, SNAPSHOT_FILE))).toBe(true);
    expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });

  it('prints the usage and exits 0 for --help, starting nothing', async () => {
    const fake = fakeIo();
    expect(await serveFromCommandLine(serverArgvOf(packagedArgv('--help')), ENV, fake.io)).toBeNull();
    expect(fake.stdout()).toMatch(/^Usage: voxflow --serve/);
    expect(fake.exit).toHaveBeenCalledWith(0);
  });

  it('refuses a mistyped flag with exit code 2 and its name, as `npm run serve` does', async () => {
    const fake = fakeIo();
    expect(await serveFromCommandLine(serverArgvOf(packagedArgv('--serve', '--prot', '80')), ENV, fake.io)).toBeNull();
    expect(fake.stderr()).toContain('unknown option --prot');
    expect(fake.exit).toHaveBeenCalledWith(2);
  });

  // The server's entry as `npm run serve` runs it: this run's bundle of server/main.ts (loading the
  // sources through tsx instead costs seconds of CPU for the same code; voxflow-test-command runs
  // the package's bin that way).
  it('gives the server entry the same flags: server/main.ts as `npm run serve` runs it serves with them and stops cleanly', { timeout: 120_000 }, async () => {
    const dataDir = await dataFolder();
    const serverArgv = serverArgvOf(packagedArgv('--serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn'));
    const child = spawn(process.execPath, [serverBundle(), ...serverArgv], { cwd: ROOT, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    cleanups.push(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await vi.waitFor(() => {
      if (child.exitCode !== null) throw new Error(`exited early:\n${output}`);
      expect(output).toMatch(SERVING);
    }, { timeout: 60_000, interval: 25 });
    const [, url, , announcedDir] = SERVING.exec(output)!;
    expect(announcedDir).toBe(dataDir);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false);
  });
});
