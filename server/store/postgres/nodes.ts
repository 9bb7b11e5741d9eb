// This node's row in `nodes` (see ../repositories/nodes.ts): written when the store opens, kept
// fresh by beat(), removed when the store closes cleanly. A node that crashed leaves its row to
// go stale; once no connected session of it is left (the sweep that noticed it gone ended them),
// the next sweep of any node removes it (forgetGone).

import { NODE_GONE_AFTER_SECS, newNodeId } from '../repositories/nodes.ts';
import type { NodesRepository } from '../repositories/nodes.ts';
import type { PgDatabase } from './database.ts';

export interface PgNodesRepository extends NodesRepository {
  /** Writes this node's row: it is alive from now on. Called once, at open. */
  join(): Promise<void>;
  /** Removes this node's row: its sessions are no longer held by anyone. Called at a clean close. */
  leave(): Promise<void>;
}

export function createPgNodesRepository(db: PgDatabase, self: string = newNodeId(), goneAfterSecs = NODE_GONE_AFTER_SECS): PgNodesRepository {
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
      await upsert(db.now());
    },
    async forgetGone() {
      // The same test of "gone" as sessions.ts's onLiveNode, so a row goes only once its node's
      // sessions are ones endInterrupted ends.
      return db.run(
        `DELETE FROM nodes n
         WHERE n.last_seen_at <= $1::double precision - $2::double precision
           AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.node_id = n.id AND s.status = 'connected')`,
        [db.now(), goneAfterSecs],
      );
    },
    async leave() {
      await db.run('DELETE FROM nodes WHERE id = $1', [self]);
    },
  };
}
