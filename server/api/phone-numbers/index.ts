// Phone numbers bound to flows: a carrier's calls to the number are answered by the flow's
// published version. A number belongs to one account on the whole server; the answer says the
// exact URLs to paste into the carrier's console for its voice and status webhooks.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { accountOf } from '../../http/services.ts';
import { noBody } from '../../http/api-contract.ts';
import { PhoneNumberView } from '../../protocol/api/phone.ts';
import { CARRIERS, PhoneNumberTakenError, type PhoneNumber } from '../../store/store.ts';

export const MAX_PHONE_NUMBERS_PER_ACCOUNT = 500;
/** E.164: a plus, a country code that does not start with 0, at most 15 digits in all. */
export const E164 = /^\+[1-9]\d{6,14}$/;
/** A SIP number is the user part of the called URI: RFC 3261's unreserved characters, no `@`. */
const SIP_USER = /^[A-Za-z0-9._~+-]{1,64}$/;

const CreateBody = z
  .object({
    carrier: z.enum(CARRIERS, { error: `must be one of ${CARRIERS.join(', ')}` }),
    number: z.string().trim().min(1, 'must not be empty').max(64, 'at most 64 characters'),
    flow_id: z.string().min(1, 'must not be empty').max(200),
    label: z.string().trim().max(200, 'at most 200 characters').default(''),
  })
  .strict()
  .superRefine((body, context) => {
    if (body.carrier === 'sip' ? !SIP_USER.test(body.number) : !E164.test(body.number)) {
      const message = body.carrier === 'sip' ? 'must be a SIP user part (letters, digits and . _ ~ + -)' : 'must be in E.164 form, e.g. +15551234567';
      context.addIssue({ code: 'custom', path: ['number'], message });
    }
  });

/** A carrier's webhook URLs on this server; a SIP number is reached over SIP, not by webhook. */
function webhookUrls(publicUrl: string, number: PhoneNumber) {
  if (number.carrier === 'sip') return { webhook_url: null, status_url: null };
  return { webhook_url: `${publicUrl}/telephony/${number.carrier}/voice`, status_url: `${publicUrl}/telephony/${number.carrier}/status` };
}

const NumberParams = z.object({ id: z.string() });

export async function phoneNumberRoutes(server: FastifyInstance): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store } = app.services;
  const view = (number: PhoneNumber) => ({
    id: number.id,
    carrier: number.carrier,
    number: number.number,
    flow_id: number.flowId,
    label: number.label,
    ...webhookUrls(app.services.publicUrl(), number),
    created_at: number.createdAt,
    last_call_at: number.lastCallAt,
    last_call_status: number.lastCallStatus,
  });

  app.post('/v1/phone-numbers', { config: { auth: 'jwt' }, schema: { body: CreateBody, response: { 201: PhoneNumberView } } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    const { body } = request;
    const flow = await store.flows.get(accountId, body.flow_id);
    if (!flow) throw new AppError('flow_not_found', `No flow with the id "${body.flow_id}".`);
    if (!(flow.publishedVersion >= 1)) throw new AppError('flow_not_published', `The flow "${flow.name}" has no published version: publish it first (drafts never take real calls).`);
    if ((await store.phoneNumbers.list(accountId)).length >= MAX_PHONE_NUMBERS_PER_ACCOUNT) {
      throw new AppError('invalid_request', `An account binds at most ${MAX_PHONE_NUMBERS_PER_ACCOUNT} phone numbers; delete one first.`);
    }
    try {
      const number = await store.phoneNumbers.create({ accountId, carrier: body.carrier, number: body.number, flowId: flow.id, label: body.label });
      return reply.status(201).send(view(number));
    } catch (error) {
      // Which account holds it is not said: that would tell one tenant about another.
      if (error instanceof PhoneNumberTakenError) throw new AppError('phone_number_taken', `${body.number} is already bound on this server; release it there first.`);
      throw error;
    }
  });

  app.get('/v1/phone-numbers', { config: { auth: 'jwt_or_api_key' }, schema: { response: { 200: z.array(PhoneNumberView) } } }, async (request) => {
    return (await store.phoneNumbers.list(accountOf(request.principal))).map(view);
  });

  app.get('/v1/phone-numbers/:id', { config: { auth: 'jwt_or_api_key' }, schema: { params: NumberParams, response: { 200: PhoneNumberView } } }, async (request) => {
    const number = await store.phoneNumbers.get(accountOf(request.principal), request.params.id);
    if (!number) throw new AppError('phone_number_not_found', `No phone number with the id "${request.params.id}".`);
    return view(number);
  });

  app.delete('/v1/phone-numbers/:id', { config: { auth: 'jwt' }, schema: { params: NumberParams, response: { 204: noBody('Released: the number takes no more calls') } } }, async (request, reply) => {
    if (!(await store.phoneNumbers.delete(accountOf(request.principal), request.params.id))) {
      throw new AppError('phone_number_not_found', `No phone number with the id "${request.params.id}".`);
    }
    return reply.status(204).send();
  });
}
