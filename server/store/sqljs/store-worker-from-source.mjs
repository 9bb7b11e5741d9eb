// Starts the store worker from the TypeScript sources (tsx, vitest), as
// ../../jobs/flow-worker-from-source.mjs does the flow worker: Node 20 loads .ts only through
// tsx's loader. The bundles build store-worker.ts into store-worker.mjs, which needs none of this.
import { register } from 'tsx/esm/api';

register();
await import(new URL('./store-worker.ts', import.meta.url).href);
