// Which server process ("node") holds a voice session (docs/hosting.md). Every process gets a
// new id when it opens the store; a session records the node that claimed or created it
// connected. On PostgreSQL several nodes share one database: each keeps a row in `nodes` fresh
// (a heartbeat every NODE_HEARTBEAT_SECS) and removes it when it stops cleanly, so a node whose row
// is missing or older than NODE_GONE_AFTER_SECS is gone, and its 'connected' sessions can be ended
// by any other node (sessions.endInterrupted) rather than read as live forever; the row of a node
// that died goes once its sessions have been ended (forgetGone).
//
// The embedded sql.js store has one node by construction (its process holds the data dir's
// lock): its sessions record the node id too, but it keeps no heartbeat rows; the lock says who
// is alive, and endInterrupted at start ends every connected session as it always has.
import { randomBytes } from 'node:crypto';

/** How often a node says it is alive. */
export const NODE_HEARTBEAT_SECS = 10;

/**
 * A node silent this long is gone: six missed heartbeats, so a node under a long GC pause or a
 * short database outage is not declared dead (its live calls would be ended under it).
 */
export const NODE_GONE_AFTER_SECS = 60;

export interface NodesRepository {
  /** This process's node id (`node_` and 8 characters), new at every open of the store. */
  readonly self: string;
  /**
   * This node is alive now. On PostgreSQL it refreshes the node's row (and brings it back if it
   * had been forgotten); on sql.js it writes nothing.
   */
  beat(): Promise<void>;
  /**
   * Removes the rows of gone nodes that no longer hold a connected session, and says how many.
   * A node's sweep calls it before ending gone nodes' sessions, so a dead node's row outlives the
   * sweep that ended its calls (whoever looks into why they ended still finds when it was last
   * seen) and goes at the next. A node forgotten while still alive (a pause past the node
   * timeout) writes its row again at its next beat. On sql.js it removes nothing.
   */
  forgetGone(): Promise<number>;
}

/** `node_` and 8 random URL-safe characters (48 bits: unique among any real fleet's restarts). */
export function newNodeId(): string {
  return `node_${randomBytes(6).toString('base64url')}`;
}
