// Starting the server from code. `startServer` builds, listens and announces the URL; the
// desktop app calls it for its embedded server. `serveFromCommandLine` is the headless command
// (`npm run serve`, and the packaged app's `--serve`): flags, exit codes, signals and a graceful
// close that flushes the store. Both forms go through here so they cannot drift apart.
import type { FastifyInstance } from 'fastify';
import { ConfigError, DEFAULT_SHUTDOWN_GRACE_SECONDS, USAGE, makeConfig, parseCommandLine, type Config } from './config.ts';
import { buildApp, type BuildOptions } from './app.ts';
import { StoreLockedError } from './store/store.ts';
import { TurnModelError } from './engine/turn-model.ts';
import { exitGuardsSettled } from './concurrency/exit-guards.ts';

/**
 * How long a graceful close may take (sessions end, the store snapshots) before giving up, by
 * default; the headless command takes it from VOXFLOW_SHUTDOWN_GRACE_SECONDS.
 */
export const SHUTDOWN_GRACE_MS = DEFAULT_SHUTDOWN_GRACE_SECONDS * 1000;
/** Past the grace period, how long a forced exit still waits for a model load in progress. */
const FORCED_EXIT_LOAD_WAIT_MS = 10_000;

export interface RunningServer {
  app: FastifyInstance;
  /** The app's own config: its publicUrl carries the real port once listening on port 0. */
  config: Config;
  /** Where clients reach it (the public URL). */
  url: string;
  /** The address it listens on, e.g. http://127.0.0.1:43125. */
  address: string;
  /** Ends live sessions and flushes the store, once; later calls wait for the same close. */
  close(): Promise<void>;
  /** Takes no new sessions and waits up to `withinMs` for the live ones to end on their own. */
  drain(withinMs: number): Promise<void>;
}

export interface StartServerOptions extends BuildOptions {
  /** Receives the "Voxflow is serving at …" line; stdout by default. */
  announce?: (line: string) => void;
}

/** Builds the app and listens on the configured host and port. Throws StoreLockedError when another process holds the data dir. */
export async function startServer(config: Config, options: StartServerOptions = {}): Promise<RunningServer> {
  const { announce = (line: string) => process.stdout.write(line), ...buildOptions } = options;
  const app = await buildApp(config, buildOptions);
  let address: string;
  try {
    address = await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    // A taken port must not leave the data dir locked by a server that never served.
    await app.close();
    throw error;
  }
  const url = app.services.publicUrl();
  app.log.info({ url, dataDir: config.dataDir }, `Voxflow is listening on ${address}`);
  announce(`Voxflow is serving at ${url} (listening on ${address}, data in ${config.dataDir})\n`);

  let closing: Promise<void> | null = null;
  return {
    app,
    config,
    url,
    address,
    close: () => (closing ??= app.close()),
    drain: (withinMs) => app.services.engine.drain(withinMs),
  };
}

/** What the headless command touches of its process; injected so the desktop and tests can stand in. */
export interface ServeCommandIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Ends the process: process.exit under Node, app.exit in Electron. */
  exit(code: number): void;
  /** Where SIGINT and SIGTERM arrive. */
  signals: { on(signal: 'SIGINT' | 'SIGTERM', listener: () => void): unknown };
}

export const processIo: ServeCommandIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  exit: (code) => process.exit(code),
  signals: process,
};

export interface ServeCommand {
  server: RunningServer;
  /** Closes gracefully, then exits 0 (1 if closing failed or took too long). Idempotent. */
  stop(reason: string): void;
}

/**
 * Runs `voxflow --serve [flags]`: prints the usage for --help or without --serve, exits 2 on a
 * bad flag or value or an end-of-turn model it cannot load, and 1 when the data dir is in use;
 * otherwise serves until SIGINT/SIGTERM (or `stop`). Resolves with the running command, or null once it has exited.
 */
export async function serveFromCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv, io: ServeCommandIo = processIo): Promise<ServeCommand | null> {
  let cli;
  let config;
  try {
    cli = parseCommandLine(argv, env);
    config = makeConfig(cli.config);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr(`${error.message}\n`);
      io.exit(2);
      return null;
    }
    throw error;
  }
  if (cli.help || !cli.serve) {
    io.stdout(USAGE);
    io.exit(cli.help ? 0 : 2);
    return null;
  }

  let server: RunningServer;
  let deferredAnnouncement = '';
  try {
    // The serving line is printed only once the signal handlers below are in place: a host that
    // sends SIGTERM as soon as it reads the line must get the graceful close, not Node's default.
    let servingLine = '';
    server = await startServer(config, { announce: (line) => (servingLine = line) });
    deferredAnnouncement = servingLine;
  } catch (error) {
    if (error instanceof StoreLockedError) {
      io.stderr(`${error.message}\n`);
      io.exit(1);
      return null;
    }
    // A configured end-of-turn model that cannot be used is a setting to fix, as a bad flag is.
    if (error instanceof TurnModelError) {
      io.stderr(`${error.message}\n`);
      io.exit(2);
      return null;
    }
    throw error;
  }

  let closing = false;
  let draining: (() => void) | null = null;
  const stop = (reason: string) => {
    // A second signal while calls drain: end them now.
    if (draining) return draining();
    if (closing) return;
    closing = true;
    const live = server.app.services.engine.activeSessions;
    if (config.drainSeconds > 0 && live > 0) {
      server.app.log.info(`${reason}: draining: taking no new sessions, letting ${live} live ${live === 1 ? 'session' : 'sessions'} end on their own for up to ${config.drainSeconds} s (a second signal ends them now)`);
      const cut = new Promise<void>((resolve) => (draining = resolve));
      void Promise.race([server.drain(config.drainSeconds * 1000), cut]).then(() => {
        draining = null;
        close(reason);
      });
      return;
    }
    close(reason);
  };
  const close = (reason: string) => {
    server.app.log.info(`${reason}: closing; the store is flushed before exit`);
    // Not unref()'d: this timer keeps the process alive until the close settles. Unref'd, a
    // close that never settled let the event loop run dry and the process exit 0 with the store
    // unflushed and its lock left behind.
    const force = setTimeout(() => {
      io.stderr('shutdown took too long; exiting without a final snapshot (acknowledged writes are in the journal)\n');
      // A model still loading would abort the process if torn down now (exit-guards.ts).
      void exitGuardsSettled(FORCED_EXIT_LOAD_WAIT_MS).then(() => io.exit(1));
    }, config.shutdownGraceSeconds * 1000);
    server.close().then(
      () => {
        clearTimeout(force);
        io.exit(0);
      },
      (error: unknown) => {
        clearTimeout(force);
        io.stderr(`error while closing: ${String(error)}\n`);
        io.exit(1);
      },
    );
  };
  io.signals.on('SIGINT', () => stop('SIGINT'));
  io.signals.on('SIGTERM', () => stop('SIGTERM'));
  io.stdout(deferredAnnouncement);
  return { server, stop };
}
