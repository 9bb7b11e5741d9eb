// A real kamailio as the SIP trunk in tests: registrar and proxy on loopback (the configuration is
// test/phone/sip/fixtures/kamailio-registrar.cfg), run as the current user in the foreground with
// its own runtime folder, its log read from stderr. It is stopped (its process group killed) after
// the test, or after the file when started for a whole file, whatever happened.
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vi } from 'vitest';
import { afterThisFile, afterThisTest } from './after-this-test.ts';
import { FIXTURES } from './sip-rig.ts';

export const KAMAILIO = '/usr/sbin/kamailio';

export interface KamailioOptions {
  /** The user Voxflow registers as, and its password. */
  trunkUser: string;
  trunkPassword: string;
  /** The number callers dial at the trunk. */
  did: string;
  /** Where calls that Voxflow places are sent on to (a sipp UAS); any unused port when unset. */
  outPort?: number;
  /** Listen on this port (a restart on the same port); a free one when unset. */
  port?: number;
  /** Answer every REGISTER 503 (a registrar that is down for registrations). */
  refuse?: boolean;
  /** Keep it for the whole test file (stopped after the file) rather than one test. */
  forFile?: boolean;
  /** Also listen on TCP, on the same port number. */
  tcp?: boolean;
  /** Also listen on TLS (on port+1), with this certificate and key (PEM files). */
  tls?: { certFile: string; keyFile: string };
}

export interface Kamailio {
  port: number;
  /** Where it takes TLS, when started with `tls` (port + 1); 0 otherwise. */
  tlsPort: number;
  /** Every line kamailio logged, in order. */
  lines: string[];
  /** The REGISTERs it took (authenticated): the user, the Expires asked for and when (ms, kamailio's clock), in order. */
  registers(): Array<{ user: string; expires: number; at: number }>;
  /** When it refused a REGISTER (with refuse set), in order. */
  refused(): number[];
  /** Waits for a logged line matching `pattern`. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  stop(): Promise<void>;
}

/**
 * When kamailio logged a line, from the `at=<seconds.microseconds>` its registrar's lines end with,
 * in ms: the time we read a line is later by however long this process was busy (starting the
 * server beside it, two lines could arrive in one read).
 */
function loggedAt(line: string): number | null {
  const match = / at=(\d+)\.(\d{1,6})\b/.exec(line);
  return match ? Number(match[1]) * 1000 + Number(match[2]!.padEnd(6, '0')) / 1000 : null;
}

export async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** A port free for UDP and, when asked, for TCP on it and TLS (TCP) on the next one. */
export async function freeSipPort(tcp: boolean, tls: boolean): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = await freeUdpPort();
    const needed = [...(tcp || tls ? [port] : []), ...(tls ? [port + 1] : [])];
    const free = await Promise.all(needed.map((candidate) => tcpPortFree(candidate)));
    if (free.every(Boolean) || attempt >= 20) return port;
  }
}

function tcpPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Starts kamailio on a free port. A port free when it was picked can be taken before kamailio
 * binds it (another test's socket, on a busy machine): kamailio then says "Address already in
 * use" and exits, and a port of our own choosing is picked again.
 */
export async function startKamailio(options: KamailioOptions): Promise<Kamailio> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startKamailioOnce(options);
    } catch (error) {
      if (options.port !== undefined || attempt >= 3 || !(error instanceof PortTaken)) throw error;
    }
  }
}

class PortTaken extends Error {}

async function startKamailioOnce(options: KamailioOptions): Promise<Kamailio> {
  const port = options.port ?? (await freeSipPort(Boolean(options.tcp), Boolean(options.tls)));
  const outPort = options.outPort ?? (await freeUdpPort());
  const runDir = await mkdtemp(join(tmpdir(), 'voxflow-kamailio-'));
  const quoted = (value: string) => `"${value.replace(/["\\]/g, '')}"`;
  const child = spawn(
    KAMAILIO,
    [
      '-f', join(FIXTURES, 'kamailio-registrar.cfg'),
      '-DD', '-E',
      '-l', `udp:127.0.0.1:${port}`,
      ...(options.tcp || options.tls ? ['-l', `tcp:127.0.0.1:${port}`, '-A', 'WITH_TCP'] : []),
      ...(options.tls ? ['-l', `tls:127.0.0.1:${port + 1}`, '-A', 'WITH_TLS', '-A', `TLS_CERT=${quoted(options.tls.certFile)}`, '-A', `TLS_KEY=${quoted(options.tls.keyFile)}`] : []),
      '-Y', runDir,
      '-P', join(runDir, 'kamailio.pid'),
      '-w', runDir,
      '-m', '32', '-M', '4',
      '-A', `TRUNK_USER=${quoted(options.trunkUser)}`,
      '-A', `TRUNK_PASSWORD=${quoted(options.trunkPassword)}`,
      '-A', `DID=${quoted(options.did)}`,
      '-A', `OUT_URI=${quoted(`sip:127.0.0.1:${outPort}`)}`,
      ...(options.refuse ? ['-A', 'REFUSE'] : []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  const lines: string[] = [];
  const times: number[] = [];
  let partial = '';
  const read = (chunk: Buffer) => {
    partial += chunk.toString('utf8');
    const parts = partial.split('\n');
    partial = parts.pop()!;
    if (lines.length >= 20_000) return;
    lines.push(...parts);
    times.push(...parts.map(() => performance.now()));
  };
  child.stdout.on('data', read);
  child.stderr.on('data', read);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      try {
        // kamailio's children are in the group we gave it: they go with it.
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
      const gone = await Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000))]);
      if (!gone) {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
        await exited;
      }
    }
    await rm(runDir, { recursive: true, force: true });
  };
  (options.forFile ? afterThisFile : afterThisTest)(stop);
  const waitForLine = (pattern: RegExp, timeoutMs = 20_000) =>
    vi.waitFor(
      () => {
        const line = lines.find((l) => pattern.test(l));
        if (!line) throw new Error(`kamailio never logged ${pattern}; its last lines:\n${lines.slice(-20).join('\n')}`);
        return line;
      },
      { timeout: timeoutMs, interval: 100 },
    );
  try {
    await waitForLine(/listening on|udp: 127\.0\.0\.1/i, 15_000);
    // Its workers are up once the first of them says so; a short wait more for the rest.
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (child.exitCode !== null || child.signalCode !== null) {
      const log = lines.slice(-20).join('\n');
      if (/Address already in use/.test(log)) throw new PortTaken(`kamailio could not bind port ${port}:\n${log}`);
      throw new Error(`kamailio exited as it started; its last lines:\n${log}`);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    port,
    tlsPort: options.tls ? port + 1 : 0,
    lines,
    registers: () =>
      lines.flatMap((line, i) => {
        const match = /REGISTER (\S+) expires=(\d+)/.exec(line);
        return match ? [{ user: match[1]!, expires: Number(match[2]), at: loggedAt(line) ?? times[i]! }] : [];
      }),
    refused: () => lines.flatMap((line, i) => (/REFUSED REGISTER/.test(line) ? [loggedAt(line) ?? times[i]!] : [])),
    waitForLine,
    stop,
  };
}
