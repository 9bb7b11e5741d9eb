// Request bodies and queries are checked with zod; a failure is a 422 listing every problem.
import type { z } from 'zod';
import { AppError } from '../errors.ts';

export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what = 'body'): z.infer<S> {
  if (what === 'body' && (input === undefined || input === null)) {
    throw new AppError('invalid_request', 'The request needs a JSON object body.');
  }
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({
    field: issue.path.length > 0 ? issue.path.join('.') : what,
    message: issue.message,
  }));
  throw new AppError('invalid_request', `The ${what} is not valid: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}.`, details);
}
