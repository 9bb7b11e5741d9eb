// A script a test runs as a child process (a TypeScript file that imports the server's sources),
// bundled with esbuild into one plain ES module, so each process it starts runs JavaScript
// instead of loading tsx and transforming every source it imports. The crash writer, started five
// times a run: 2.3 s of CPU a process through tsx (docs/testing.md, "Where the suite's CPU goes").
//
// Packages stay imports (native addons and WASM find their files in node_modules), so the bundle
// is written inside the project, in a folder of its own under dist/.test-scripts/ that the file's
// cleanup removes, failing or not.
import { build } from 'esbuild';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterThisFile } from './after-this-test.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPTS = join(ROOT, 'dist', '.test-scripts');

/** Bundles `entry` (an absolute path) once for this test file; the path of the .mjs to run. */
export async function bundleScript(entry: string): Promise<string> {
  await mkdir(SCRIPTS, { recursive: true });
  const dir = await mkdtemp(join(SCRIPTS, `${basename(entry, '.ts')}-`));
  afterThisFile(() => rm(dir, { recursive: true, force: true }));
  const outfile = join(dir, `${basename(entry, '.ts')}.mjs`);
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
  return outfile;
}
