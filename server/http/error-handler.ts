// Every failure leaves as {"error":{"code","message","details"}} with the status of its code in
// server/errors.ts; 5xx bodies never carry internals (those go to the log). Fastify's own errors
// and the store's are mapped onto registry codes here, not restated.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, ERRORS, errorBody, type ErrorCode } from '../errors.ts';
import { discardRestOfUpload } from './refused-uploads.ts';
import { ApiKeyRefusedError, SessionCapReachedError, StoreClosedError, StoreFailedError, StoreUnreachableError } from '../store/store.ts';

/** Fastify's own error codes, as registry codes (with a more precise message where it helps). */
const FASTIFY_CODES: Record<string, { code: ErrorCode; message?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'payload_too_large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'unsupported_media_type' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'bad_request', message: 'The Content-Length does not match the body.' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'malformed_json', message: 'The body is empty but the content type says JSON.' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'malformed_json' },
};

/**
 * The database could not be reached (PostgreSQL restarting, a failover): a moment's matter, so the
 * client is told to try again then; a node recovers on its own once the database answers.
 */
const STORE_RETRY_AFTER_SECONDS = '1';
const STORE_UNREACHABLE_MESSAGE = 'The database cannot be reached right now; try again shortly.';

function sendCoded(reply: FastifyReply, code: ErrorCode, message?: string, details?: unknown[]) {
  return reply.status(ERRORS[code].status).send(errorBody(code, message ?? ERRORS[code].message, details));
}

/** Paths whose answers are the API's or the engine's, never a page: their 404 stays the coded JSON error. */
const API_PATHS = /^\/(v1|auth|assets|ws|offer|health|ready|metrics|capabilities|openapi|docs)(\/|$|\.)/;

/** Errors raised before routing (a malformed URL, an overlong id): Fastify's `frameworkErrors` option. */
export const frameworkErrors: NonNullable<FastifyServerOptions['frameworkErrors']> = (error, _request, rawReply) => {
  // The callback's reply is typed for the route that could not be found; it is a plain reply.
  const reply = rawReply as unknown as FastifyReply;
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendCoded(reply, 'not_found', 'Nothing is here: ids are at most 100 characters.');
  return sendCoded(reply, 'bad_request', error.message);
};

/**
 * The API's code for an error, as the handler below would answer it: for code that meets errors
 * outside a request (a phone call's media stream) and must tell them apart the same way.
 */
export function errorCodeOf(error: unknown): ErrorCode {
  if (error instanceof AppError) return error.code;
  if (error instanceof SessionCapReachedError) return 'too_many_sessions';
  if (error instanceof ApiKeyRefusedError) return 'invalid_credentials';
  if (error instanceof StoreFailedError || error instanceof StoreClosedError || error instanceof StoreUnreachableError) return 'store_unavailable';
  return 'internal';
}

export const errorHandlerPlugin = fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler(async (raised: FastifyError | AppError | Error, request, reply) => {
      let error = raised;
      // A request whose API key rides on its first read (server/http/auth.ts) may fail before the
      // key is known active. The key decides first: refused, the answer is 401 whatever else went
      // wrong; not checkable (the database away), the answer is that. Settled here, not in the
      // auth plugin's onSend, because an error raised there would reach Fastify's own handler.
      const check = request.keyCheck;
      request.keyCheck = null;
      if (check && !(error instanceof ApiKeyRefusedError)) {
        try {
          await check.confirm();
        } catch (checkError) {
          error = checkError instanceof Error ? checkError : new Error(String(checkError));
        }
      }
      if (error instanceof AppError) {
        if (error.headers) void reply.headers(error.headers);
        return sendCoded(reply, error.code, error.message, error.details);
      }
      // The per-account cap on live sessions, held by the store across nodes
      // (docs/hosting.md#several-nodes-on-postgresql).
      if (error instanceof SessionCapReachedError) return sendCoded(reply, 'too_many_sessions', error.message);
      // A key the store found unknown or revoked while reading (PostgreSQL checks it in the read).
      if (error instanceof ApiKeyRefusedError) return sendCoded(reply, 'invalid_credentials', error.message);
      if (error instanceof StoreFailedError || error instanceof StoreClosedError) {
        request.log.error({ err: error }, 'store unavailable');
        return sendCoded(reply, 'store_unavailable');
      }
      // One line, no stack: during a database restart every request in flight ends here.
      if (error instanceof StoreUnreachableError) {
        request.log.warn({ reason: error.message }, 'store unreachable; answered 503');
        void reply.header('retry-after', STORE_RETRY_AFTER_SECONDS);
        return sendCoded(reply, 'store_unavailable', STORE_UNREACHABLE_MESSAGE);
      }
      const known = (error as FastifyError).code ? FASTIFY_CODES[(error as FastifyError).code] : undefined;
      if ((error as FastifyError).code === 'FST_ERR_CTP_BODY_TOO_LARGE') discardRestOfUpload(request, reply);
      if (known) return sendCoded(reply, known.code, known.message);
      // JSON.parse failures surface as a 400 SyntaxError from the content-type parser.
      if (error instanceof SyntaxError && (error as FastifyError).statusCode === 400) {
        return sendCoded(reply, 'malformed_json', `The request body is not valid JSON: ${error.message}`);
      }
      const status = (error as FastifyError).statusCode;
      if (status && status >= 400 && status < 500) {
        return reply.status(status).send(errorBody('bad_request', error.message));
      }
      request.log.error({ err: error }, 'unhandled error');
      return sendCoded(reply, 'internal');
    });

    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split('?')[0]!;
      // A browser following a link the studio has no page for gets the studio, which shows its
      // not-found screen, with a 404. API clients, scripts and asset requests get the coded error.
      const studio = app.services.studioPage;
      if (studio && (request.method === 'GET' || request.method === 'HEAD') && /\btext\/html\b/.test(request.headers.accept ?? '') && !API_PATHS.test(path)) {
        return reply.status(404).headers(studio.headers).send(studio.body);
      }
      return sendCoded(reply, 'not_found', `No route ${request.method} ${path}.`);
    });
  },
  { name: 'voxflow-errors' },
);
