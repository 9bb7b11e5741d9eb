// This node's row in `nodes` (see ../repositories/nodes.ts): written when the store opens, kept
// fresh by beat(), removed when the store closes cleanly. A node that crashed leaves its row to
// go stale; rows silent for a day are removed by the next beat of any node.

import { newNodeId } from '../repositories/nodes.ts';
import type { NodesRepository } from '../repositories/nodes.ts';
import type { PgDatabase } from './database.ts';

/** A crashed node's row is kept this long (for whoever looks), then forgotten. */
const FORGET_GONE_NODES_AFTER_SECS = 24 * 60 * 60;

export interface PgNodesRepository extends NodesRepository {
  /** Writes this node's row: it is alive from now on. Called once, at open. */
  join(): Promise<void>;
  /** Removes this node's row: its sessions are no longer held by anyone. Called at a clean close. */
  leave(): Promise<void>;
}

export function createPgNodesRepository(db: PgDatabase, self: string = newNodeId()): PgNodesRepository {
  const upsert = (now: number) =>
    db.run(
      `INSERT INTO nodes (id, started_at, last_seen_at) VALUES ($1, $2, $2)
       ON CONFLICT (id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at`,
      [self, now],
    );
  return {
    self,
    async join() {
      await upsert(db.now());
    },
    async beat() {
      const now = db.now();
      await upsert(now);
      await db.run('DELETE FROM nodes WHERE last_seen_at < $1', [now - FORGET_GONE_NODES_AFTER_SECS]);
    },
    async leave() {
      await db.run('DELETE FROM nodes WHERE id = $1', [self]);
    },
  };
}
