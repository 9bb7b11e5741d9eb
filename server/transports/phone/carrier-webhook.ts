// What every route a carrier posts to does first: read the form it sent, check its signature
// with the credentials of the account the request concerns, and answer with markup.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.ts';
import type { Carrier, Markup, VoiceWebhook } from '../carriers/carrier.ts';
import { openCarrierCredentials } from './carrier-credentials.ts';

/** The URL the carrier requested, as it signed it: our public base and the path with its query. */
export function signedUrl(publicUrl: string, request: FastifyRequest): string {
  return publicUrl + request.url;
}

export function formParams(body: unknown): Record<string, string> {
  if (typeof body !== 'string') return {};
  const params: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(body)) params[name] = value;
  return params;
}

/** Reads a carrier's webhook and checks its signature with the credentials of the account it concerns. */
export async function verifiedWebhook(app: FastifyInstance, carrier: Carrier, request: FastifyRequest, accountId: string): Promise<void> {
  const rawBody = typeof request.body === 'string' ? request.body : '';
  const credentials = await openCarrierCredentials(app.services, accountId, carrier.name);
  const verdict = credentials
    ? carrier.verifyVoiceWebhook({ url: signedUrl(app.services.publicUrl(), request), headers: request.headers, rawBody, params: formParams(request.body) }, credentials as never)
    : { ok: false as const, reason: `the account has no ${carrier.name} credentials` };
  if (!verdict.ok) {
    request.log.warn({ carrier: carrier.name, reason: verdict.reason }, 'carrier webhook refused');
    throw new AppError('carrier_signature_invalid', `The ${carrier.name} signature does not check out: ${verdict.reason}.`);
  }
}

export function parsedCall(carrier: Carrier, request: FastifyRequest): VoiceWebhook {
  const parsed = carrier.parseVoiceWebhook(formParams(request.body));
  if (!parsed.ok) throw new AppError('invalid_request', `This is not a ${carrier.name} webhook: ${parsed.reason}.`);
  return parsed.call;
}

export function answer(reply: FastifyReply, markup: Markup) {
  return reply.header('content-type', markup.contentType).send(markup.body);
}
