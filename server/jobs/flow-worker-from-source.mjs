// Starts the flow worker from the TypeScript sources (tsx, vitest): Node 20 loads .ts only
// through tsx's loader, and a worker does not take it from --import in its execArgv before its
// entry loads. The bundles build flow-worker.ts into flow-worker.mjs, which needs none of this.
import { register } from 'tsx/esm/api';

register();
await import(new URL('./flow-worker.ts', import.meta.url).href);
