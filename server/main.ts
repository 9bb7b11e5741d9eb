// The command line: `voxflow --serve` (and `npm run serve`) runs the server headless. Process
// concerns live here only: flags, listening, signals, a graceful close that flushes the store.
import { ConfigError, USAGE, makeConfig, parseCommandLine } from './config.ts';
import { buildApp } from './app.ts';
import { StoreLockedError } from './store/store.ts';

const SHUTDOWN_GRACE_MS = 10_000;

export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  let cli;
  let config;
  try {
    cli = parseCommandLine(argv, env);
    config = makeConfig(cli.config);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  if (cli.help || !cli.serve) {
    process.stdout.write(USAGE);
    process.exit(cli.help ? 0 : 2);
  }

  let app;
  try {
    app = await buildApp(config);
  } catch (error) {
    if (error instanceof StoreLockedError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const address = await app.listen({ host: config.host, port: config.port });
  const port = Number(new URL(address).port);
  // With --port 0 the real port is known only now; the public URL follows it unless configured.
  if (config.port === 0 && !cli.config.publicUrl) {
    config.publicUrl = config.publicUrl.replace(/:0$/, `:${port}`);
  }
  app.log.info({ url: config.publicUrl, dataDir: config.dataDir }, `Voxflow is listening on ${address}`);
  process.stdout.write(`Voxflow is serving at ${config.publicUrl} (listening on ${address}, data in ${config.dataDir})\n`);

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info(`${signal}: closing; the store is flushed before exit`);
    const force = setTimeout(() => {
      process.stderr.write('shutdown took too long; exiting\n');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`error while closing: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

await main(process.argv.slice(2), process.env);
