// Builds the studio (renderer/) with Vite into dist/renderer/, which the server serves at `/`.
// With --if-stale it does nothing when the build is newer than every source it is made from, so
// `npm run serve` and the browser tests pay for a build only after a change.
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCES = ['renderer', 'scripts/build-renderer.mjs', 'server/flow', 'server/protocol', 'server/providers/catalog.ts', 'resources/flows', 'electron/contract.ts', 'package.json'];

async function newest(path) {
  const info = await stat(path);
  if (!info.isDirectory()) return info.mtimeMs;
  let latest = 0;
  for (const entry of await readdir(path)) latest = Math.max(latest, await newest(join(path, entry)));
  return latest;
}

export async function isStudioFresh() {
  try {
    const built = (await stat(join(root, 'dist', 'renderer', 'index.html'))).mtimeMs;
    for (const source of SOURCES) if ((await newest(join(root, source))) >= built) return false;
    return true;
  } catch {
    return false;
  }
}

export async function buildStudio() {
  const { build } = await import('vite');
  // Always a production build, also when called from the tests: vitest sets NODE_ENV=test, and
  // Vite takes "production" from NODE_ENV, so Svelte would compile in dev mode (twice the code,
  // slower pages than users get).
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({ configFile: join(root, 'renderer', 'vite.config.ts'), logLevel: 'warn', mode: 'production' });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
  await precompress(join(root, 'dist', 'renderer', 'assets'));
}

const COMPRESSIBLE = /\.(js|css|svg|json|wasm|yaml|html)$/;

/**
 * Brotli and gzip copies of every asset beside it (x.js.br, x.js.gz), made once at build time
 * at the highest levels, so the server sends the smallest file it has without compressing on
 * the thread that paces audio (@fastify/static's preCompressed picks by Accept-Encoding).
 */
async function precompress(dir) {
  const br = promisify(brotliCompress);
  const gz = promisify(gzip);
  const files = (await readdir(dir)).filter((name) => COMPRESSIBLE.test(name));
  await Promise.all(
    files.map(async (name) => {
      const content = await readFile(join(dir, name));
      if (content.length < 1024) return;
      await writeFile(join(dir, `${name}.br`), await br(content, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: content.length } }));
      await writeFile(join(dir, `${name}.gz`), await gz(content, { level: 9 }));
    }),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!(process.argv.includes('--if-stale') && (await isStudioFresh()))) await buildStudio();
}
