// Spreading work over frames. A task started from a requestAnimationFrame callback still runs
// before that frame is painted (its work is part of the same long frame); one started by a timer
// from that callback runs after the paint, so its work and rendering land in the next frame.

/** Resolves once the next frame has been painted. */
export function afterNextPaint(): Promise<void> {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}
