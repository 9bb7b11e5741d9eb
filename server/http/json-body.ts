// Request bodies are JSON only: any other content type is a clear 415, not a confusing 422.
// Many clients send `Content-Type: application/json` on every POST, body or not; an empty body
// means "no body" (routes that need one say so with a 422). Otherwise Fastify's own parser,
// which refuses __proto__ and constructor.prototype keys, then a nesting check.
//
// A route whose bodies are whole flow documents (`jsonBodyAsText`) gets the bytes as they came,
// never decoded here: they cross to a flow worker by transfer (no copy), and the worker decodes,
// parses and checks them (jobs/json-text.ts) with the answers this plugin would give.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.ts';
import { MAX_JSON_DEPTH, nestingDepth } from './json-depth.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route takes its JSON body as its UTF-8 bytes (a JsonBodyText) and has it decoded and
     * parsed in a flow worker: for bodies of up to 512 KiB whose decoding, parse, check and copy
     * would otherwise run on the thread that paces audio. The route must then refuse what this
     * plugin would.
     */
    jsonBodyAsText?: boolean;
  }
}

/**
 * A JSON body as it came, for a worker to decode and parse (flow-jobs.ts); at most maxDepth deep.
 * `bytes` owns its whole ArrayBuffer, so that it can be transferred to the worker, not copied.
 */
export class JsonBodyText {
  readonly maxDepth = MAX_JSON_DEPTH;
  constructor(readonly bytes: Uint8Array) {}
}

/** Whether `byte` is one of the ASCII characters String.prototype.trim removes. */
const asciiSpace = (byte: number) => byte === 0x20 || (byte >= 0x09 && byte <= 0x0d);

/**
 * Whether a body is blank as `text.trim() === ''` would say of its text, without decoding it
 * unless it starts with a byte past ASCII (trim also removes some non-ASCII spaces).
 */
function isBlank(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (asciiSpace(byte)) continue;
    return byte >= 0x80 && bytes.toString('utf8').trim() === '';
  }
  return true;
}

/** The body's bytes in an ArrayBuffer of their own (a received chunk may share its buffer with others). */
function ownBytes(bytes: Buffer): Uint8Array {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return new Uint8Array(bytes.buffer);
  return new Uint8Array(bytes);
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
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      if (request.routeOptions.config.jsonBodyAsText) return done(null, isBlank(bytes) ? undefined : new JsonBodyText(ownBytes(bytes)));
      const text = bytes.toString('utf8');
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
