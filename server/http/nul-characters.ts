// No request may carry the NUL character (U+0000): PostgreSQL cannot store it in text at all
// (it refuses the whole statement), and no field of the API has a use for it. It is refused here,
// once for every route, with a 422 naming where it was, so both stores answer alike and nothing
// reaches a query: path and query parameters (`%00`) before the credential is looked up, bodies
// once parsed (JSON strings and keys, `\u0000`; form fields of carriers' webhooks). A body a flow
// worker parses (JsonBodyText) is checked there, by jobs/json-text.ts, with the same words.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.ts';
import { JsonBodyText } from './json-body.ts';

export const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
export const NUL_KEY_MESSAGE = 'must not have a key containing the NUL character (U+0000)';

interface NulFound {
  field: string;
  message: string;
}

/**
 * Where the first NUL in `value` is, as parseInput names fields (`context.caller`, `events.0`), or
 * null. A key with a NUL is reported at the object holding it. Walked without recursion: bodies
 * have passed the nesting check, but the walk must not be what a hostile one overflows.
 */
export function findNulCharacter(value: unknown, whole: string): NulFound | null {
  if (flatWithoutNul(value)) return null;
  const stack: Array<{ value: unknown; path: string[] }> = [{ value, path: [] }];
  const fieldOf = (path: string[]) => (path.length > 0 ? path.join('.') : whole);
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return { field: fieldOf(path), message: NUL_MESSAGE };
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], path: [...path, String(i)] });
      continue;
    }
    const entries = Object.entries(current);
    if (entries.some(([key]) => key.includes('\u0000'))) return { field: fieldOf(path), message: NUL_KEY_MESSAGE };
    for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i]![1], path: [...path, entries[i]![0]] });
  }
  return null;
}

/**
 * Whether `value` is no object, a string without NUL, or an object of such strings: what nearly
 * every path and query is (`{}` for most), and a GET's body (none). Checked without the walk's
 * allocations, which every request would otherwise pay three times.
 */
function flatWithoutNul(value: unknown): boolean {
  if (typeof value === 'string') return !value.includes('\u0000');
  if (typeof value !== 'object' || value === null) return true;
  if (Array.isArray(value)) return false;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const field = (value as Record<string, unknown>)[key];
    if (typeof field !== 'string' || field.includes('\u0000') || key.includes('\u0000')) return false;
  }
  return true;
}

function refuseNul(value: unknown, what: 'body' | 'query' | 'path'): void {
  const found = findNulCharacter(value, what);
  if (found) throw new AppError('invalid_request', `The ${what} is not valid: ${found.field}: ${found.message}.`, [found]);
}

export const nulCharactersPlugin = fp(
  async (app: FastifyInstance) => {
    // Before the auth plugin's hook: a credential lookup must not be the first to meet one.
    // Callbacks, not async: every request passes both, and an async hook costs each a promise.
    app.addHook('onRequest', (request, _reply, done) => {
      try {
        refuseNul(request.params, 'path');
        refuseNul(request.query, 'query');
      } catch (error) {
        return done(error as Error);
      }
      done();
    });
    app.addHook('preValidation', (request, _reply, done) => {
      if (request.body instanceof JsonBodyText) return done();
      try {
        refuseNul(request.body, 'body');
      } catch (error) {
        return done(error as Error);
      }
      done();
    });
  },
  { name: 'voxflow-nul-characters', dependencies: ['voxflow-json-body'] },
);
