// An account's do-not-call list: numbers its outbound calls refuse to ring. Changed with a JWT
// (a person decides who is never called), read with either credential, so a backend can check.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { accountOf } from '../../http/services.ts';
import { parseInput } from '../../http/validation.ts';
import { E164 } from '../phone-numbers/index.ts';

/** Enough for a business's opt-outs; a bigger list belongs with the business's own CRM. */
export const MAX_DO_NOT_CALL_PER_ACCOUNT = 10_000;

const e164 = z.string().trim().regex(E164, 'must be in E.164 form, e.g. +15551234567');
const AddBody = z.object({ number: e164 }).strict();

const entryView = (entry: { number: string; createdAt: number }) => ({ number: entry.number, created_at: entry.createdAt });

export async function doNotCallRoutes(app: FastifyInstance): Promise<void> {
  const { store } = app.services;

  app.post('/v1/do-not-call', { config: { auth: 'jwt' } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    const { number } = parseInput(AddBody, request.body);
    if (!(await store.doNotCall.isDoNotCall(accountId, number)) && (await store.doNotCall.list(accountId)).length >= MAX_DO_NOT_CALL_PER_ACCOUNT) {
      throw new AppError('invalid_request', `A do-not-call list holds at most ${MAX_DO_NOT_CALL_PER_ACCOUNT} numbers.`);
    }
    const { created, entry } = await store.doNotCall.add(accountId, number);
    return reply.status(created ? 201 : 200).send(entryView(entry));
  });

  app.get('/v1/do-not-call', { config: { auth: 'jwt_or_api_key' } }, async (request) => {
    return (await store.doNotCall.list(accountOf(request.principal))).map(entryView);
  });

  // The number in the path as E.164, its + written as is or as %2B.
  app.delete<{ Params: { number: string } }>('/v1/do-not-call/:number', { config: { auth: 'jwt' } }, async (request, reply) => {
    const number = parseInput(z.object({ number: e164 }), request.params, 'path').number;
    if (!(await store.doNotCall.remove(accountOf(request.principal), number))) {
      throw new AppError('do_not_call_not_found', `${number} is not on this account's do-not-call list.`);
    }
    return reply.status(204).send();
  });
}
