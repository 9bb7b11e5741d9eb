// Starts the store worker from the TypeScript sources (tsx, vitest), as
// ../../jobs/flow-worker-from-source.mjs does the flow worker: Node 20 loads .ts only through
// tsx's loader. The bundles build store-worker.ts into store-worker.mjs, which needs none of this.
// VOXFLOW_WORKER_BUNDLE_DIR, when set, names such a build of these same sources, whose
// store-worker.mjs runs instead (0.2 s of CPU a start against 0.9–1.5 s through tsx).
const bundleDir = process.env.VOXFLOW_WORKER_BUNDLE_DIR;
if (bundleDir) {
  const { pathToFileURL } = await import('node:url');
  const { join } = await import('node:path');
  await import(pathToFileURL(join(bundleDir, 'store-worker.mjs')).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('./store-worker.ts', import.meta.url).href);
}
