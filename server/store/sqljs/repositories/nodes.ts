// The embedded store's (sql.js) nodes repository; its interface and types are in ../../repositories/nodes.ts.
import type { NodesRepository } from '../../repositories/nodes.ts';

/** sql.js: one process, one node; its liveness is the data dir's lock, not a row. */

export function createEmbeddedNodesRepository(self: string): NodesRepository {
  return {
    self,
    beat: async () => undefined,
    forgetGone: async () => 0,
  };
}
