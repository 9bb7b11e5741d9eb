// API keys: created with a label (shown once), listed without the secret, revoked at once.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { newApiKey } from '../../security/opaque-tokens.ts';
import type { ApiKey } from '../../store/store.ts';
import { accountOf } from '../../http/services.ts';
import { parseInput } from '../../http/validation.ts';

const CreateQuery = z.object({ label: z.string().trim().max(100, 'at most 100 characters').optional() });

function publicView(key: ApiKey) {
  return { id: key.id, label: key.label, prefix: key.prefix, created_at: key.createdAt, last_used_at: key.lastUsedAt };
}

export async function apiKeyRoutes(app: FastifyInstance): Promise<void> {
  const { store } = app.services;
  const config = { auth: 'jwt' as const };

  app.post('/auth/api-keys', { config: { ...config, carriesSecret: true } }, async (request, reply) => {
    const { label } = parseInput(CreateQuery, request.query, 'query');
    const { key, prefix, hash } = newApiKey();
    const record = await store.apiKeys.create({ accountId: accountOf(request.principal), label: label || 'default', prefix, keyHash: hash });
    return reply.status(201).send({ key, ...publicView(record) });
  });

  app.get('/auth/api-keys', { config }, async (request) => {
    return (await store.apiKeys.listByAccount(accountOf(request.principal))).map(publicView);
  });

  app.delete<{ Params: { key_id: string } }>('/auth/api-keys/:key_id', { config }, async (request, reply) => {
    const revoked = await store.apiKeys.revoke(accountOf(request.principal), request.params.key_id);
    if (!revoked) throw new AppError('api_key_not_found');
    return reply.status(204).send();
  });
}
