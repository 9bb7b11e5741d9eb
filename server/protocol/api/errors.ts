// The one error body every failure of the HTTP API has: a stable snake_case code (the registry
// in server/errors.ts), a message for a person, and for some codes the details a client acts on
// (the fields that failed validation, a flow's diagnostics, the current ETag of a draft).
import { z } from 'zod';

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.array(z.unknown()).optional(),
    }),
  })
  .meta({ id: 'ErrorBody' });
export type ErrorBody = z.infer<typeof ErrorBody>;
