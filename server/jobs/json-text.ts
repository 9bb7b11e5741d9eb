// A JSON request body read in a flow worker instead of on the thread that paces audio. The flow
// document's JSON form (PUT /v1/flows/{id}/json) is up to 512 KiB of objects: on the main thread
// its parse, the nesting check and the copy into the worker took about 4.4 ms of CPU per request,
// and left a tree of thousands of objects for the collector. Here the text crosses to
// the worker as one string, and is parsed where the document is edited anyway.
//
// It refuses what server/http/json-body.ts refuses, with the same codes: text that is not JSON
// (400 malformed_json), a `__proto__` or `constructor.prototype` key (400 malformed_json, as
// Fastify's parser does), nesting past the limit the caller passes (422 invalid_request, the
// limit being json-depth.ts's, which this layer may not import), a NUL character in a string or a
// key (422 invalid_request naming the field, as http/nul-characters.ts words it). The walk below
// measures depth and looks for those keys in one pass, without recursion.

export type JsonTextRefusal = {
  code: 'malformed_json' | 'invalid_request';
  message: string;
  details?: unknown[];
  /** The server's own parser closes the connection after refusing a body it could not read. */
  closeConnection?: boolean;
};

/** A request body's text from its UTF-8 bytes, as Buffer#toString reads them on the main thread. */
export const bodyText = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');

export type ParsedJsonText = { ok: true; value: unknown } | { ok: false; refusal: JsonTextRefusal };

export function parseJsonText(text: string, maxDepth: number): ParsedJsonText {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, refusal: { code: 'malformed_json', message: `The request body is not valid JSON: ${(error as Error).message}` } };
  }
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    const here = depth + 1;
    if (here > maxDepth) {
      return { ok: false, refusal: { code: 'invalid_request', message: `The body is nested more than ${maxDepth} levels deep.` } };
    }
    if (!Array.isArray(current)) {
      if (Object.hasOwn(current, '__proto__') || isConstructorPrototype(current)) {
        return { ok: false, refusal: { code: 'malformed_json', message: 'The request body is not valid JSON: it has a __proto__ or constructor.prototype key.' } };
      }
    }
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: here });
    }
  }
  // Valid JSON holds a NUL only as the escape \u0000: without one in the text, no walk is needed.
  if (text.includes('\\u0000')) {
    const found = findNulCharacter(value);
    if (found) {
      return { ok: false, refusal: { code: 'invalid_request', message: `The body is not valid: ${found.field}: ${found.message}.`, details: [found] } };
    }
  }
  return { ok: true, value };
}

/** Where the first NUL is, as http/nul-characters.ts names it (a key's at the object holding it); null if none. */
function findNulCharacter(value: unknown): { field: string; message: string } | null {
  const stack: Array<{ value: unknown; path: string[] }> = [{ value, path: [] }];
  const fieldOf = (path: string[]) => (path.length > 0 ? path.join('.') : 'body');
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return { field: fieldOf(path), message: 'must not contain the NUL character (U+0000)' };
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    const entries = Array.isArray(current) ? current.map((child, i) => [String(i), child] as const) : Object.entries(current);
    if (!Array.isArray(current) && entries.some(([key]) => key.includes('\u0000'))) {
      return { field: fieldOf(path), message: 'must not have a key containing the NUL character (U+0000)' };
    }
    for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i]![1], path: [...path, entries[i]![0]] });
  }
  return null;
}

function isConstructorPrototype(object: object): boolean {
  if (!Object.hasOwn(object, 'constructor')) return false;
  const constructor = (object as { constructor: unknown }).constructor;
  return typeof constructor === 'object' && constructor !== null && Object.hasOwn(constructor, 'prototype');
}

/**
 * Why a parsed body is not a flow document's JSON form (an object), in the words parseInput
 * gives for the same body on the main thread; null when it is one.
 */
export function objectBodyRefusal(value: unknown): (JsonTextRefusal & { details?: unknown[] }) | null {
  if (value === null) return { code: 'invalid_request', message: 'The request needs a JSON object body.' };
  if (typeof value === 'object' && !Array.isArray(value)) return null;
  const message = 'must be the flow document as a JSON object';
  return { code: 'invalid_request', message: `The body is not valid: body: ${message}.`, details: [{ field: 'body', message }] };
}

/**
 * A body read exactly as the main thread reads every other route's (server/http/json-body.ts with
 * Fastify's JSON parser, then http/nul-characters.ts), with the same answers: text that is not
 * JSON, or with a `__proto__` or `constructor.prototype` key anywhere, is 400 malformed_json with
 * the registry's message; nesting past `maxDepth` is a 422 naming the limit (both with the
 * connection closed, as a refused parse closes it there); a NUL anywhere is the 422 naming where.
 * JSON null is left to the caller (the route's schema refuses it, as parseInput does).
 */
export function readJsonBody(bytes: Uint8Array, maxDepth: number): ParsedJsonText {
  let text = bodyText(bytes);
  // As secure-json-parse (Fastify's parser): a leading byte-order mark is not part of the JSON.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, refusal: { code: 'malformed_json', message: 'The request body is not valid JSON.', closeConnection: true } };
  }
  let deepest = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (Object.hasOwn(current, '__proto__') || isConstructorPrototype(current)) {
      return { ok: false, refusal: { code: 'malformed_json', message: 'The request body is not valid JSON.', closeConnection: true } };
    }
    const here = depth + 1;
    if (here > deepest) deepest = here;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: here });
    }
  }
  if (deepest > maxDepth) {
    return { ok: false, refusal: { code: 'invalid_request', message: `The body is nested more than ${maxDepth} levels deep.`, closeConnection: true } };
  }
  if (text.includes('\\u0000')) {
    const found = findNulCharacter(value);
    if (found) return { ok: false, refusal: { code: 'invalid_request', message: `The body is not valid: ${found.field}: ${found.message}.`, details: [found] } };
  }
  return { ok: true, value };
}
