// Starts the flow worker's thread (flow-worker.ts). Kept apart from worker-client.ts so that the
// editor screen can start it the moment it opens, before the editor's code has loaded: the
// worker's script then loads and compiles while the page loads the rest.

/** The flow worker's thread, or null where no Worker can be started. */
export function spawnFlowWorker(): Worker | null {
  try {
    return new Worker(new URL('./flow-worker.ts', import.meta.url), { type: 'module', name: 'flow' });
  } catch {
    return null;
  }
}
