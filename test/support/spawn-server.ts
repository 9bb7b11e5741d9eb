// Runs the real command line (`voxflow --serve`) as a child process, as a host would: in tests the
// bundle `npm run serve` runs (server-bundle.ts), outside them (the benches) the sources.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { serverBundle } from './server-bundle.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  /** Where the process listens (http://127.0.0.1:port), whatever public URL it was given. */
  url: string;
  /** Everything the process wrote so far, both streams. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The sources through tsx. */
export const SOURCE_ENTRY = ['--import', 'tsx', 'server/main.ts'];

/** The server's entry: this test run's bundle under vitest, the sources elsewhere (benches run under tsx). */
export function serverEntry(): string[] {
  return process.env.VITEST ? [serverBundle()] : SOURCE_ENTRY;
}

/**
 * Starts `node <entry> --serve ...args` and waits for its serving line. A quiet machine here
 * serves in 1.6 s from the bundle and 3 s from the sources; beside a second test run (load
 * about 20 on two cores) starts took over 20 s and 30 s, hence the minute by default.
 */
export function spawnServer(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000, entry: string[] = serverEntry()): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...entry, '--serve', '--port', '0', '--log-level', 'warn', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      // The address it listens on: behind a public URL (VOXFLOW_PUBLIC_URL) that is not this node's own.
      const match = /Voxflow is serving at \S+ \(listening on (http:\/\/[^\s,]+),/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1]!, output: () => output, exited });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`server exited (code ${code}, signal ${signal}) before serving:\n${output}`));
    });
  });
}
