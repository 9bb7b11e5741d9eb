// Starts the flow worker from the TypeScript sources (tsx, vitest): Node 20 loads .ts only
// through tsx's loader, and a worker does not take it from --import in its execArgv before its
// entry loads. The bundles build flow-worker.ts into flow-worker.mjs, which needs none of this.
//
// VOXFLOW_WORKER_BUNDLE_DIR, when set, names a build of these same sources by
// scripts/build-server.mjs (`--outdir`): its flow-worker.mjs runs instead, which spares each
// worker's start the transform of its TypeScript (1.2–1.8 s of CPU against 0.3 s). The test
// suite sets it to the build it makes for its run; whoever sets it keeps that build current.
const bundleDir = process.env.VOXFLOW_WORKER_BUNDLE_DIR;
if (bundleDir) {
  const { pathToFileURL } = await import('node:url');
  const { join } = await import('node:path');
  await import(pathToFileURL(join(bundleDir, 'flow-worker.mjs')).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('./flow-worker.ts', import.meta.url).href);
}
