// Builds the studio (renderer/) with Vite into dist/renderer/, which the server serves at `/`.
// With --if-stale it does nothing when the build is newer than every source it is made from, so
// `npm run serve` and the browser tests pay for a build only after a change.
//
// Two runs at once (two `npm test`s, a bench beside the tests) must not pull the studio from
// under each other's servers: the check and the build hold a lock (a folder, made atomically),
// so the second run waits and then finds the build fresh; and a build is made beside
// dist/renderer and swapped in by rename, so a server never serves a half-emptied folder.
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
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

const OUT = join(root, 'dist', 'renderer');
const LOCK = join(root, 'dist', '.renderer-build.lock');

/** Whether the process that made the lock still runs (a killed build leaves its lock behind). */
async function lockHolderAlive() {
  try {
    const pid = Number(await readFile(join(LOCK, 'pid'), 'utf8'));
    if (!Number.isInteger(pid) || pid <= 0) return false;
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, another user's. Anything else (no pid file yet, ESRCH): treat as gone only
    // once the lock is old enough that a new holder would have written its pid.
    if (error?.code === 'EPERM') return true;
    const made = await stat(LOCK).then((info) => info.mtimeMs, () => 0);
    return Date.now() - made < 5_000;
  }
}

async function withBuildLock(work) {
  await mkdir(join(root, 'dist'), { recursive: true });
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      await mkdir(LOCK);
      break;
    } catch (error) {
      if (error?.code !== 'EEXIST') throw error;
      if (!(await lockHolderAlive())) {
        await rm(LOCK, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`the studio build lock ${LOCK} has been held for ten minutes`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    await writeFile(join(LOCK, 'pid'), String(process.pid));
    return await work();
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}

/** Builds the studio unless the build is newer than its sources; safe to call from two runs at once. */
export async function buildStudioIfStale() {
  return withBuildLock(async () => {
    if (!(await isStudioFresh())) await buildInto();
  });
}

/** Builds the studio, whatever the state of the last build. */
export async function buildStudio() {
  return withBuildLock(buildInto);
}

async function buildInto() {
  const next = join(root, 'dist', `.renderer-next-${process.pid}`);
  const old = join(root, 'dist', `.renderer-old-${process.pid}`);
  try {
    await buildTo(next);
    await rm(old, { recursive: true, force: true });
    await rename(OUT, old).catch((error) => {
      if (error?.code !== 'ENOENT') throw error;
    });
    await rename(next, OUT);
  } finally {
    await rm(next, { recursive: true, force: true });
    await rm(old, { recursive: true, force: true });
  }
}

async function buildTo(outDir) {
  const { build } = await import('vite');
  // Always a production build, also when called from the tests: vitest sets NODE_ENV=test, and
  // Vite takes "production" from NODE_ENV, so Svelte would compile in dev mode (twice the code,
  // slower pages than users get).
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({ configFile: join(root, 'renderer', 'vite.config.ts'), logLevel: 'warn', mode: 'production', build: { outDir, emptyOutDir: true } });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
  await precompress(join(outDir, 'assets'));
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
  if (process.argv.includes('--if-stale')) await buildStudioIfStale();
  else await buildStudio();
}
