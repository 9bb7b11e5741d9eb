// Bundles the Electron main process and preload into dist/electron/ with esbuild.
// - main.mjs: an ES module (Electron 28+ loads ESM main scripts) holding electron/ and the whole
//   server, npm packages left external (they ship in the app's node_modules). Dynamic imports
//   stay separate chunks, as in the server's own bundle, so vendor SDKs load on first use.
// - preload.cjs: CommonJS with everything but `electron` inlined: a sandboxed preload can only
//   be CommonJS and can require nothing but Electron's sandbox modules.
// The files the server loads by URL next to its own module are copied beside main.mjs.
import { build } from 'esbuild';
import { copyFile, mkdir, readFile, readdir, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// `--outdir=<dir>` builds elsewhere (tests); the folder must be inside the project so the
// bundle's bare imports still find node_modules.
const outdirFlag = process.argv.find((arg) => arg.startsWith('--outdir='));
const outdir = outdirFlag ? resolve(outdirFlag.slice('--outdir='.length)) : join(root, 'dist', 'electron');

// Old chunks would otherwise pile up in the package (their names carry content hashes).
await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });
await build({
  // The server's flow-job and store workers go beside main.mjs, where server/jobs/flow-jobs.ts
  // and server/store/sqljs/worker-store.ts look for them.
  entryPoints: {
    main: join(root, 'electron', 'main.ts'),
    'flow-worker': join(root, 'server', 'jobs', 'flow-worker.ts'),
    'store-worker': join(root, 'server', 'store', 'sqljs', 'store-worker.ts'),
  },
  outdir,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  packages: 'external',
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  platform: 'node',
  format: 'esm',
  // Electron 45 runs Node 22.
  target: 'node22',
  sourcemap: 'linked',
  logLevel: 'warning',
});
await build({
  entryPoints: [join(root, 'electron', 'preload.ts')],
  outfile: join(outdir, 'preload.cjs'),
  bundle: true,
  external: ['electron'],
  platform: 'node',
  format: 'cjs',
  // Electron 45's Chromium.
  target: 'chrome140',
  sourcemap: 'linked',
  logLevel: 'warning',
});
// Files the server loads by URL next to its own module (`new URL('./x', import.meta.url)`: worker
// scripts, the WebRTC test page). Found in the sources rather than listed, so a new one cannot
// be forgotten here; the bundle puts every such module in main.mjs, so they go beside it.
for (const asset of await serverAssets(join(root, 'server'))) await copyFile(asset, join(outdir, basename(asset)));

async function serverAssets(dir) {
  const found = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const source = await readFile(join(entry.parentPath, entry.name), 'utf8');
    for (const match of source.matchAll(/new URL\(\s*'\.\/([^'/]+)'\s*,\s*import\.meta\.url\s*\)/g)) found.push(join(entry.parentPath, match[1]));
  }
  return found;
}
