// Depth of parsed JSON, measured without recursion (the point is to survive hostile nesting).

/** Flow documents nest about 8 levels; no legitimate body comes near this. */
export const MAX_JSON_DEPTH = 64;

/** Deepest nesting of arrays and objects in `value`; stops counting once past `limit`. */
export function nestingDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
  let deepest = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    const here = depth + 1;
    if (here > deepest) deepest = here;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: here });
    }
  }
  return deepest;
}
