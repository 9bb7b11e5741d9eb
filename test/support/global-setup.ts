// Runs once before the tests: the browser tests load the studio from the server, which serves
// the Vite build in dist/renderer, so it is built here when any of its sources changed. A build
// that fails does not stop the other tests: the error is printed and the old build removed, so
// the studio's own tests fail on the server's "studio is not built" page instead of a stale one.
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
// @ts-expect-error: a plain ES module script without type declarations.
import { buildStudioIfStale } from '../../scripts/build-renderer.mjs';

export default async function setup(): Promise<void> {
  try {
    // Another run building at the same time is waited for, not raced (see the script).
    await (buildStudioIfStale as () => Promise<void>)();
  } catch (error) {
    process.stderr.write(`\nThe studio (renderer/) does not build; its browser tests will fail:\n${String(error)}\n\n`);
    await rm(fileURLToPath(new URL('../../dist/renderer/index.html', import.meta.url)), { force: true });
  }
}
