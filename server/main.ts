// The command line: `voxflow --serve` (and `npm run serve`) runs the server headless. The process
// concerns (flags, listening, signals, a graceful close that flushes the store) are in serve.ts,
// shared with the desktop app's `--serve`; this file only runs them, so importing serve.ts
// never starts a server.
import { serveFromCommandLine } from './serve.ts';

await serveFromCommandLine(process.argv.slice(2), process.env);
