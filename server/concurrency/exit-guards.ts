// Work a forced exit must let finish first. A native library torn down half-way through a load
// can abort the whole process: onnxruntime, terminated while its worker thread creates a session,
// throws a Napi::Error from the teardown and the process dies by SIGABRT instead of the exit code
// the host was promised (seen on SIGTERM a second after start on a loaded machine, about 1 time in
// 10). A forced exit is a last resort, but it must still say what happened with its exit code.

const held = new Set<Promise<unknown>>();

/** Marks `work` as something process exit waits for; it is released once it settles. */
export function holdExit(work: Promise<unknown>): void {
  const settled = work.then(
    () => undefined,
    () => undefined,
  );
  held.add(settled);
  void settled.then(() => held.delete(settled));
}

/** Resolves once every held work has settled, or after `limitMs`, whichever comes first. */
export async function exitGuardsSettled(limitMs: number): Promise<void> {
  if (held.size === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(held), new Promise<void>((resolve) => (timer = setTimeout(resolve, limitMs)))]);
  clearTimeout(timer);
}
