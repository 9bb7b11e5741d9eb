// The JSON an editor hands over, read as the plain data a YAML document can hold, and the one
// equality every step uses to decide whether a piece of text holds what it must.

export type Data = null | boolean | number | string | Data[] | DataObject;
export interface DataObject {
  [key: string]: Data;
}

// The editor may hand us objects with `undefined` members or Dates; read them as JSON.stringify
// would, but keep what YAML can hold and JSON cannot (-0, Infinity, NaN) so that the data read
// from a document applies back onto it unchanged. Nothing here throws.
export function toData(value: unknown, seen: Set<object>): Data | undefined {
  if (value === null) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'number':
      return value;
    case 'bigint':
      return Number(value);
    case 'object':
      break;
    default:
      return undefined;
  }
  const object = value as object;
  if (seen.has(object)) return null;
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    let replaced: unknown;
    try {
      replaced = (toJSON as () => unknown).call(object);
    } catch {
      return undefined;
    }
    if (replaced !== object) {
      seen.add(object);
      const result = toData(replaced, seen);
      seen.delete(object);
      return result;
    }
  }
  seen.add(object);
  let result: Data;
  if (Array.isArray(object)) {
    result = object.map((item: unknown) => toData(item, seen) ?? null);
  } else {
    const out: DataObject = {};
    for (const key of Object.keys(object)) {
      const item = toData((object as Record<string, unknown>)[key], seen);
      if (item !== undefined) setOwn(out, key, item);
    }
    result = out;
  }
  seen.delete(object);
  return result;
}

// `out['__proto__'] = x` would set the prototype instead of adding the key.
export function setOwn(target: DataObject, key: string, value: Data): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

export function isDataObject(value: Data | undefined): value is DataObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function dataEquals(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!dataEquals(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ak = Object.keys(a);
  if (ak.length !== Object.keys(b).length) return false;
  for (const key of ak) {
    if (!Object.prototype.hasOwnProperty.call(b, key)) return false;
    if (!dataEquals((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function single(key: string, value: Data): DataObject {
  const object: DataObject = {};
  setOwn(object, key, value);
  return object;
}

export function isScalarData(value: Data | undefined): value is null | boolean | number | string {
  return value === null || typeof value !== 'object';
}
