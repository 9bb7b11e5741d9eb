// The states a state's phone keys lead to — its keypad's keys, its collected number's `then`, its
// failed transfer's `on_failed` — rewritten in place when the studio renames or deletes a state,
// as it rewrites the tools' transitions. Reads a document being edited, so anything may be absent.
type Obj = Record<string, unknown>;

function asObject(value: unknown): Obj | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Obj) : null;
}

/**
 * `rewrite` maps a target to its new name, or to null when the state is gone: a key into it is
 * removed (it then moves nothing, as a deleted tool transition keeps the state), as is `on_failed`;
 * a collect's `then` is required, so it is left for the validator to point at.
 */
export function retargetPhoneMoves(state: unknown, rewrite: (target: string) => string | null): void {
  const dtmf = asObject(asObject(state)?.dtmf);
  const keys = asObject(dtmf?.keys);
  if (keys) {
    for (const [key, target] of Object.entries(keys)) {
      if (typeof target !== 'string') continue;
      const next = rewrite(target);
      if (next === null) delete keys[key];
      else keys[key] = next;
    }
  }
  const collect = asObject(dtmf?.collect);
  if (collect && typeof collect.then === 'string') collect.then = rewrite(collect.then) ?? collect.then;
  const transfer = asObject(asObject(asObject(state)?.on_enter)?.transfer);
  if (transfer && typeof transfer.on_failed === 'string') {
    const next = rewrite(transfer.on_failed);
    if (next === null) delete transfer.on_failed;
    else transfer.on_failed = next;
  }
}
