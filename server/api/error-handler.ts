// Every failure leaves as {"error":{"code","message","details"}} with the registry's status;
// 5xx bodies never carry internals (those go to the log).
import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError, errorBody } from '../errors.ts';
import { StoreClosedError, StoreFailedError } from '../store/store.ts';

/** Fastify's own error codes, mapped onto ours. */
const FASTIFY_CODES: Record<string, { status: number; code: string; message: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'payload_too_large', message: 'The request body is too large.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: 'unsupported_media_type', message: 'Send the body as application/json.' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'bad_request', message: 'The Content-Length does not match the body.' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'malformed_json', message: 'The body is empty but the content type says JSON.' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'malformed_json', message: 'The request body is not valid JSON.' },
};

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError | Error, request, reply) => {
    if (error instanceof AppError) {
      if (error.headers) void reply.headers(error.headers);
      return reply.status(error.status).send(errorBody(error.code, error.message, error.details));
    }
    if (error instanceof StoreFailedError || error instanceof StoreClosedError) {
      request.log.error({ err: error }, 'store unavailable');
      return reply.status(503).send(errorBody('store_unavailable', 'The database cannot take writes right now.'));
    }
    const code = (error as FastifyError).code;
    const known = code ? FASTIFY_CODES[code] : undefined;
    if (known) return reply.status(known.status).send(errorBody(known.code, known.message));
    // JSON.parse failures surface as a 400 SyntaxError from the content-type parser.
    if (error instanceof SyntaxError && (error as FastifyError).statusCode === 400) {
      return reply.status(400).send(errorBody('malformed_json', `The request body is not valid JSON: ${error.message}`));
    }
    const status = (error as FastifyError).statusCode;
    if (status && status >= 400 && status < 500) {
      return reply.status(status).send(errorBody('bad_request', error.message));
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send(errorBody('internal', 'Something went wrong on our side.'));
  });

  app.setNotFoundHandler((request, reply) => {
    return reply.status(404).send(errorBody('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`));
  });
}
