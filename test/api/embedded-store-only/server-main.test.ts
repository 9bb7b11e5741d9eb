// The headless command line (`npm run serve`: the bundle, built for this run by
// test/support/server-bundle.ts), run as a host would run it.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_FILE } from '../../../server/store/sqljs/lockfile.ts';
import { startTestServer } from '../../support/server.ts';
import { serverEntry } from '../../support/spawn-server.ts';
import { expectError } from '../error-shape.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SERVING = /Voxflow is serving at (http:\/\/127\.0\.0\.1:(\d+))/;

interface Child {
  process: ChildProcess;
  /** Both streams, in arrival order. */
  output: () => string;
  stdout: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Children of the running test, killed after it whatever happened. */
const children: ChildProcess[] = [];
/** Children of the quick command-line checks, which run alongside the other test. */
const backgroundChildren: ChildProcess[] = [];
const dataDirs: string[] = [];

function killAll(list: ChildProcess[]) {
  for (const child of list.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

afterEach(async () => {
  killAll(children);
  await Promise.all(dataDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
afterAll(() => killAll(backgroundChildren));

// `--help` and a bad flag exit on their own within a second or two: they start now and run on the
// second core while the server test below runs, instead of after it.
let cliChecks: Promise<Record<string, { code: number | null; output: string; stdout: string }>>;
beforeAll(() => {
  const invocations: Record<string, string[]> = {
    help: ['--help'],
    unknownFlag: ['--serve', '--bogus-flag'],
  };
  cliChecks = Promise.all(
    Object.entries(invocations).map(async ([name, args]) => {
      const child = run(args, backgroundChildren);
      const exit = await exitOf(child, 30_000);
      return [name, { code: exit.code, output: child.output(), stdout: child.stdout() }] as const;
    }),
  ).then((entries) => Object.fromEntries(entries));
  // Reported by the tests that read it; never an unhandled rejection.
  cliChecks.catch(() => {});
});

function run(args: string[], owner: ChildProcess[] = children): Child {
  const child = spawn(process.execPath, [...serverEntry(), ...args], {
    cwd: ROOT,
    // Only the flags configure it: no Voxflow settings or vendor keys leak in from the environment.
    env: { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(VOXFLOW_|OPENAI_API_KEY$|DEEPGRAM_API_KEY$)/.test(name))), VOXFLOW_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  owner.push(child);
  let output = '';
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { process: child, output: () => output, stdout: () => stdout, exited };
}

/** Resolves with the exit; a process that hangs is killed and fails the test. */
async function exitOf(child: Child, timeoutMs = 15_000) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      child.process.kill('SIGKILL');
      reject(new Error(`process did not exit within ${timeoutMs} ms:\n${child.output()}`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([child.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Starts a server and waits for its serving line; returns its URL. */
async function serve(dataDir: string, timeoutMs = 30_000): Promise<Child & { url: string }> {
  const child = run(['--serve', '--port', '0', '--data-dir', dataDir]);
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const match = SERVING.exec(child.output());
    if (match) return { ...child, url: match[1]! };
    if (child.process.exitCode !== null) throw new Error(`server exited with ${child.process.exitCode}:\n${child.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  child.process.kill('SIGKILL');
  throw new Error(`server did not print its serving line within ${timeoutMs} ms:\n${child.output()}`);
}

// A spawned server reached its data dir's lock after more than 15 s beside a second test run.
async function until(condition: () => boolean, timeoutMs = 45_000) {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function freshDataDir() {
  const dir = await mkdtemp(join(tmpdir(), 'voxflow-main-'));
  dataDirs.push(dir);
  return dir;
}

async function post(url: string, body: unknown) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as any };
}

describe('voxflow --serve', () => {
  // One data dir through two processes and a restart (each spawn costs about 0.7 s of CPU to its
  // serving line here).
  it('serves /health at the address it prints, refuses a second process on its data dir, exits 0 on SIGTERM and leaves its data for the next start', { timeout: 90_000 }, async () => {
    const dataDir = await freshDataDir();
    const credentials = { email: 'restart@example.com', password: 'survives a restart' };

    const firstStarting = serve(dataDir);
    firstStarting.catch(() => {});
    // As soon as the first process holds the data dir's lock, the second one starts: its own
    // start-up (about a second) then overlaps the rest of the first one's.
    await until(() => existsSync(join(dataDir, LOCK_FILE)));
    const second = run(['--serve', '--port', '0', '--data-dir', dataDir]);

    const first = await firstStarting;
    expect(Number(SERVING.exec(first.output())![2])).toBeGreaterThan(0);
    const health = await fetch(`${first.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', service: 'voxflow' });
    expect((await post(`${first.url}/auth/signup`, credentials)).status).toBe(200);

    // The second process on the same data dir stops with a message about the lock.
    const refused = await exitOf(second);
    expect(refused.code).not.toBeNull();
    expect(refused.code).not.toBe(0);
    expect(second.output()).toMatch(/in use by another Voxflow process/);
    expect(second.output()).toMatch(/lock/);
    expect(second.output()).not.toMatch(SERVING);
    expect((await fetch(`${first.url}/health`)).status).toBe(200);

    first.process.kill('SIGTERM');
    expect(await exitOf(first)).toEqual({ code: 0, signal: null });

    // Started again on the same data dir (in this process, to spare a second ~1 s start-up).
    const again = await startTestServer({ dataDir });
    try {
      const login = await again.request('POST', '/auth/login', { body: credentials });
      expect(login.status).toBe(200);
      expect(login.body.token_type).toBe('bearer');
      expect((await again.request('GET', '/v1/flows', { jwt: login.body.access_token })).status).toBe(200);
      expectError(await again.request('POST', '/auth/signup', { body: credentials }), 409, 'email_taken');
    } finally {
      await again.close();
    }
  });
});

describe('voxflow --serve logs', () => {
  it('as JSON lines when its output is not a terminal, and as readable lines with --log-format pretty', { timeout: 60_000 }, async () => {
    const [json, pretty] = await Promise.all([
      freshDataDir().then((dir) => run(['--serve', '--port', '0', '--data-dir', dir, '--log-level', 'info'])),
      freshDataDir().then((dir) => run(['--serve', '--port', '0', '--data-dir', dir, '--log-level', 'info', '--log-format', 'pretty'])),
    ]);
    const listening = /Voxflow is listening on/;
    await until(() => listening.test(json.stdout()) && listening.test(pretty.stdout()), 45_000);
    const jsonLine = json.stdout().split('\n').find((line) => listening.test(line))!;
    expect(JSON.parse(jsonLine)).toMatchObject({ level: 30, msg: expect.stringMatching(listening) });
    const prettyLine = pretty.stdout().split('\n').find((line) => listening.test(line))!;
    expect(prettyLine).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: Voxflow is listening on http:\/\/127\.0\.0\.1:\d+$/);
    expect(pretty.stdout()).not.toMatch(/^\{/m);
  });
});

describe('voxflow command-line errors and help', () => {
  it('prints the usage with --help and exits 0', { timeout: 35_000 }, async () => {
    const { help } = await cliChecks;
    expect(help!.code).toBe(0);
    expect(help!.stdout).toMatch(/^Usage: voxflow --serve/);
    expect(help!.stdout).toContain('--data-dir');
  });

  it('refuses an unknown flag with exit code 2 and a message naming it', { timeout: 35_000 }, async () => {
    const { unknownFlag } = await cliChecks;
    expect(unknownFlag!.code).toBe(2);
    expect(unknownFlag!.output).toContain('unknown option --bogus-flag');
    expect(unknownFlag!.output).not.toMatch(SERVING);
  });
});
