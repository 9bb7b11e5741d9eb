// This server process as one node among several sharing a PostgreSQL store
// (docs/hosting.md#several-nodes-on-postgresql): it says it is alive every NODE_HEARTBEAT_SECS, and
// every SWEEP_SECS it ends the connected sessions that gone nodes (crashed, or cut off past
// NODE_GONE_AFTER_SECS) left behind, so they do not read as live forever nor hold places under
// their account's session cap. Every node sweeps; the store ends each session once, so the one that
// ended it tells the webhooks. A gone node's row is removed by the sweep after the one that ended
// its sessions.
//
// The embedded sql.js store has one node: its start ends what an earlier run left (app.ts), and
// there is nothing to beat or sweep while it runs.

import { NODE_HEARTBEAT_SECS } from '../store/repositories/nodes.ts';
import type { Store } from '../store/store.ts';

/** How often each node looks for sessions of gone nodes. */
export const SWEEP_SECS = 30;

export interface NodePresenceLog {
  warn(details: object, message: string): void;
}

export interface NodePresence {
  /** Stops beating and sweeping; waits for one in progress. The store removes the node's row as it closes. */
  stop(): Promise<void>;
}

export interface NodePresenceTiming {
  heartbeatSecs: number;
  sweepSecs: number;
}

/** The beat and sweep for a node timeout (VOXFLOW_NODE_TIMEOUT_SECONDS): six beats and two sweeps within it. */
export function presenceTimingFor(goneAfterSecs: number): NodePresenceTiming {
  return { heartbeatSecs: goneAfterSecs / 6, sweepSecs: goneAfterSecs / 2 };
}

export function startNodePresence(
  store: Store,
  log: NodePresenceLog,
  onEnded: (sessionIds: string[]) => void,
  timing: NodePresenceTiming = { heartbeatSecs: NODE_HEARTBEAT_SECS, sweepSecs: SWEEP_SECS },
): NodePresence {
  if (store.kind !== 'postgres') return { stop: async () => undefined };
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const run = (what: string, work: () => Promise<void>) => {
    if (stopped) return;
    // One at a time: a slow database must not pile up beats.
    running = running.then(work).catch((error: unknown) => log.warn({ err: error, node: store.nodes.self }, `could not ${what}`));
  };
  const beat = setInterval(() => run('say this node is alive', () => store.nodes.beat()), timing.heartbeatSecs * 1000);
  const sweep = setInterval(
    () =>
      run('end the sessions of gone nodes', async () => {
        // First the rows of gone nodes an earlier sweep emptied: a row goes one sweep after its
        // node's sessions were ended, never with them (repositories/nodes.ts).
        await store.nodes.forgetGone();
        const ended = await store.sessions.endInterrupted();
        if (ended.length > 0) {
          log.warn({ sessions: ended.length, node: store.nodes.self }, 'ended the sessions of a node that stopped answering (end_reason server_restarted)');
          onEnded(ended);
        }
      }),
    timing.sweepSecs * 1000,
  );
  beat.unref();
  sweep.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(beat);
      clearInterval(sweep);
      await running;
    },
  };
}
