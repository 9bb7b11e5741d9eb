// The command line: `voxflow --serve` (and `npm run serve`) runs the server headless. The process
// concerns (flags, listening, signals, a graceful close that flushes the store) are in serve.ts,
// shared with the desktop app's `--serve`; this file only runs them, so importing serve.ts
// never starts a server. `voxflow test FLOW.yaml TESTS.yaml` runs a flow's tests without a
// server (test-command.ts), `voxflow replay --server URL FLOW_ID` replays a flow's recorded calls
// against its draft through a running server's API (replay-command.ts), `voxflow migrate-store`
// copies a data dir into PostgreSQL (migrate-command.ts); each is loaded only when asked for.
const argv = process.argv.slice(2);

const write = (stream: NodeJS.WriteStream) => (text: string) => new Promise<void>((resolve) => stream.write(text, () => resolve()));

if (argv[0] === 'test') {
  const { runTestCommand } = await import('./test-command.ts');
  const code = await runTestCommand(argv.slice(1), process.env, { stdout: write(process.stdout), stderr: write(process.stderr) });
  process.exit(code);
} else if (argv[0] === 'replay') {
  const { runReplayCommand } = await import('./replay-command.ts');
  const code = await runReplayCommand(argv.slice(1), process.env, { stdout: write(process.stdout), stderr: write(process.stderr) });
  process.exit(code);
} else if (argv[0] === 'migrate-store') {
  const { runMigrateStoreCommand } = await import('./migrate-command.ts');
  const code = await runMigrateStoreCommand(argv.slice(1), process.env, { stdout: write(process.stdout), stderr: write(process.stderr) });
  process.exit(code);
} else {
  const { serveFromCommandLine } = await import('./serve.ts');
  await serveFromCommandLine(argv, process.env);
}

// A module (its top-level awaits need one), which exports nothing.
export {};
