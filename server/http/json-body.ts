// Request bodies are JSON only: any other content type is a clear 415, not a confusing 422.
// Many clients send `Content-Type: application/json` on every POST, body or not; an empty body
// means "no body" (routes that need one say so with a 422). Otherwise Fastify's own parser,
// which refuses __proto__ and constructor.prototype keys, then a nesting check.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.ts';
import { MAX_JSON_DEPTH, nestingDepth } from './json-depth.ts';

export const jsonBodyPlugin = fp(
  async (app: FastifyInstance) => {
    app.removeContentTypeParser('text/plain');
    const parseJson = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim() === '') return done(null, undefined);
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
