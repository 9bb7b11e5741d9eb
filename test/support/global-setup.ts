// Runs once before the tests: the browser tests load the studio from the server, which serves
// the Vite build in dist/renderer, so it is built here when any of its sources changed.
// @ts-expect-error: a plain ES module script without type declarations.
import { buildStudio, isStudioFresh } from '../../scripts/build-renderer.mjs';

export default async function setup(): Promise<void> {
  if (!(await (isStudioFresh as () => Promise<boolean>)())) await (buildStudio as () => Promise<void>)();
}
