// Request bodies are JSON only: any other content type is a clear 415, not a confusing 422.
// Many clients send `Content-Type: application/json` on every POST, body or not; an empty body
// means "no body" (routes that need one say so with a 422). Otherwise Fastify's own parser,
// which refuses __proto__ and constructor.prototype keys, then a nesting check.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.ts';
import { MAX_JSON_DEPTH, nestingDepth } from './json-depth.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route takes its JSON body as text (a JsonBodyText) and has it parsed in a flow worker:
     * for bodies of up to 512 KiB of objects whose parse, check and copy would otherwise run on
     * the thread that paces audio. The route must then refuse what this plugin would.
     */
    jsonBodyAsText?: boolean;
  }
}

/** A JSON body as it came, for a worker to parse (flow-jobs.ts applyJsonText); at most maxDepth deep. */
export class JsonBodyText {
  readonly maxDepth = MAX_JSON_DEPTH;
  constructor(readonly text: string) {}
}

/** The body of a `jsonBodyAsText` route, or the 422 that parseInput gives a missing body. */
export function requireJsonBodyText(body: unknown): JsonBodyText {
  if (body instanceof JsonBodyText) return body;
  throw new AppError('invalid_request', 'The request needs a JSON object body.');
}

export const jsonBodyPlugin = fp(
  async (app: FastifyInstance) => {
    app.removeContentTypeParser('text/plain');
    const parseJson = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim() === '') return done(null, undefined);
      if (request.routeOptions.config.jsonBodyAsText) return done(null, new JsonBodyText(text));
      parseJson(request, text, (error, value) => {
        if (error) return done(error, undefined);
        // Validation, JSON.stringify and YAML serialisation all recurse: a body nested thousands
        // deep would overflow the stack there, so it is refused here, before anything walks it.
        if (nestingDepth(value) > MAX_JSON_DEPTH) {
          return done(new AppError('invalid_request', `The body is nested more than ${MAX_JSON_DEPTH} levels deep.`), undefined);
        }
        done(null, value);
      });
    });
  },
  { name: 'voxflow-json-body' },
);
