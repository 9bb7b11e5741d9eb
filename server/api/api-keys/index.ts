// API keys: created with a label (shown once), listed without the secret, revoked at once.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { newApiKey } from '../../security/opaque-tokens.ts';
import type { ApiKey } from '../../store/store.ts';
import { accountOf } from '../../http/services.ts';
import { noBody } from '../../http/api-contract.ts';
import { ApiKeyView, CreatedApiKey } from '../../protocol/api/accounts.ts';

const KeyParams = z.object({ key_id: z.string() });
const CreateQuery = z.object({ label: z.string().trim().max(100, 'at most 100 characters').optional() });

function publicView(key: ApiKey) {
  return { id: key.id, label: key.label, prefix: key.prefix, created_at: key.createdAt, last_used_at: key.lastUsedAt };
}

export async function apiKeyRoutes(server: FastifyInstance): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store } = app.services;
  const config = { auth: 'jwt' as const };

  app.post('/auth/api-keys', { config: { ...config, carriesSecret: true }, schema: { querystring: CreateQuery, response: { 201: CreatedApiKey } } }, async (request, reply) => {
    const { label } = request.query;
    const { key, prefix, hash } = newApiKey();
    const record = await store.apiKeys.create({ accountId: accountOf(request.principal), label: label || 'default', prefix, keyHash: hash });
    return reply.status(201).send({ key, ...publicView(record) });
  });

  app.get('/auth/api-keys', { config, schema: { response: { 200: z.array(ApiKeyView) } } }, async (request) => {
    return (await store.apiKeys.listByAccount(accountOf(request.principal))).map(publicView);
  });

  app.delete('/auth/api-keys/:key_id', { config, schema: { params: KeyParams, response: { 204: noBody('Revoked') } } }, async (request, reply) => {
    const revoked = await store.apiKeys.revoke(accountOf(request.principal), request.params.key_id);
    if (!revoked) throw new AppError('api_key_not_found');
    return reply.status(204).send();
  });
}
