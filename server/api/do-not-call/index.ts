// An account's do-not-call list: numbers its outbound calls refuse to ring. Changed with a JWT
// (a person decides who is never called), read with either credential, so a backend can check.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { accountOf } from '../../http/services.ts';
import { noBody } from '../../http/api-contract.ts';
import { DoNotCallEntry } from '../../protocol/api/phone.ts';
import { E164 } from '../phone-numbers/index.ts';

/** Enough for a business's opt-outs; a bigger list belongs with the business's own CRM. */
export const MAX_DO_NOT_CALL_PER_ACCOUNT = 10_000;

const e164 = z.string().trim().regex(E164, 'must be in E.164 form, e.g. +15551234567');
const AddBody = z.object({ number: e164 }).strict();

const entryView = (entry: { number: string; createdAt: number }) => ({ number: entry.number, created_at: entry.createdAt });

export async function doNotCallRoutes(server: FastifyInstance): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store } = app.services;

  app.post('/v1/do-not-call', { config: { auth: 'jwt' }, schema: { body: AddBody, response: { 200: DoNotCallEntry, 201: DoNotCallEntry } } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    const { number } = request.body;
    if (!(await store.doNotCall.isDoNotCall(accountId, number)) && (await store.doNotCall.list(accountId)).length >= MAX_DO_NOT_CALL_PER_ACCOUNT) {
      throw new AppError('invalid_request', `A do-not-call list holds at most ${MAX_DO_NOT_CALL_PER_ACCOUNT} numbers.`);
    }
    const { created, entry } = await store.doNotCall.add(accountId, number);
    return reply.status(created ? 201 : 200).send(entryView(entry));
  });

  app.get('/v1/do-not-call', { config: { auth: 'jwt_or_api_key' }, schema: { response: { 200: z.array(DoNotCallEntry) } } }, async (request) => {
    return (await store.doNotCall.list(accountOf(request.principal))).map(entryView);
  });

  // The number in the path as E.164, its + written as is or as %2B.
  app.delete('/v1/do-not-call/:number', { config: { auth: 'jwt' }, schema: { params: z.object({ number: e164 }), response: { 204: noBody('Removed from the list') } } }, async (request, reply) => {
    const { number } = request.params;
    if (!(await store.doNotCall.remove(accountOf(request.principal), number))) {
      throw new AppError('do_not_call_not_found', `${number} is not on this account's do-not-call list.`);
    }
    return reply.status(204).send();
  });
}
