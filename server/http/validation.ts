// Request bodies, queries and paths are checked with zod; a failure is a 422 listing every
// problem. Routes declare their schemas (api-contract.ts validates with parseInput before the
// handler runs); handlers call parseInput themselves only for what no route schema covers.
import type { z } from 'zod';
import { AppError } from '../errors.ts';

const OPTIONAL_BODIES = new WeakSet<z.ZodType>();

/** A body a client may leave out: none (or JSON null) reads as `{}`, so the schema's defaults apply. */
export function optionalBody<S extends z.ZodType>(schema: S): S {
  OPTIONAL_BODIES.add(schema);
  return schema;
}

export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what = 'body'): z.infer<S> {
  if (what === 'body' && (input === undefined || input === null)) {
    if (!OPTIONAL_BODIES.has(schema)) throw new AppError('invalid_request', 'The request needs a JSON object body.');
    input = {};
  }
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({
    field: issue.path.length > 0 ? issue.path.join('.') : what,
    message: issue.message,
  }));
  throw new AppError('invalid_request', `The ${what} is not valid: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}.`, details);
}
