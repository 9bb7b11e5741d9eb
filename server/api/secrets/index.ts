// An account's named secrets (docs/flows.md): set, list names, delete. A flow's http tool names one
// in a header as `{secret.NAME}`; the engine opens it for that request only. A value is sealed
// like provider keys (AES-256-GCM, bound to the account and the name) and is never returned,
// not even masked: a secret is re-set, not read back.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { SECRET_NAME_PATTERN, TOOL_SIGNING_SECRET } from '../../flow/secret-references.ts';
import { accountOf } from '../../http/services.ts';
import { noBody } from '../../http/api-contract.ts';
import { parseInput } from '../../http/validation.ts';
import { SecretView } from '../../protocol/api/accounts.ts';
import { WEBHOOK_SECRET_PREFIX } from '../../security/webhook-signature.ts';
import { secretContext } from '../../security/secret-box.ts';

export const MAX_SECRETS_PER_ACCOUNT = 100;

const PutBody = z
  .object({ value: z.string().min(1, 'a secret is not empty').max(8192, 'at most 8192 characters') })
  .strict();

const secretView = (secret: { name: string; createdAt: number; updatedAt: number }) => ({
  name: secret.name,
  created_at: secret.createdAt,
  updated_at: secret.updatedAt,
});

/** The signing secret must be what Standard Webhooks libraries read: base64 of at least 16 bytes. */
function signingSecretProblem(value: string): string | null {
  const encoded = value.startsWith(WEBHOOK_SECRET_PREFIX) ? value.slice(WEBHOOK_SECRET_PREFIX.length) : value;
  const isBase64 = /^[A-Za-z0-9+/]+={0,2}$/.test(encoded);
  return isBase64 && Buffer.from(encoded, 'base64').length >= 16 ? null : `${TOOL_SIGNING_SECRET} is whsec_ followed by the base64 of at least 16 random bytes`;
}

const NameParams = z.object({ name: z.string() });

export async function secretRoutes(server: FastifyInstance): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store, secrets } = app.services;

  const checkName = (name: string) => {
    if (!SECRET_NAME_PATTERN.test(name)) {
      throw new AppError('invalid_request', 'A secret name is 1 to 64 letters, digits, _ or - (a flow names it as {secret.NAME}).', [{ field: 'name', message: 'invalid name' }]);
    }
  };

  app.get('/v1/secrets', { config: { auth: 'jwt_or_api_key' }, schema: { response: { 200: z.array(SecretView) } } }, async (request) => {
    return (await store.secrets.list(accountOf(request.principal))).map(secretView);
  });

  // The body is checked after the name, in the handler: a bad name is the error told first.
  app.put('/v1/secrets/:name', { config: { auth: 'jwt', carriesSecret: true }, schema: { params: NameParams, response: { 200: SecretView.describe('Replaced'), 201: SecretView.describe('Created') } } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    const { name } = request.params;
    checkName(name);
    const { value } = parseInput(PutBody, request.body);
    if (name === TOOL_SIGNING_SECRET) {
      const problem = signingSecretProblem(value);
      if (problem) throw new AppError('invalid_request', `Nothing was saved: ${problem}.`, [{ field: 'value', message: problem }]);
    }
    const existing = await store.secrets.list(accountId);
    if (existing.length >= MAX_SECRETS_PER_ACCOUNT && !existing.some((s) => s.name === name)) {
      throw new AppError('invalid_request', `An account keeps at most ${MAX_SECRETS_PER_ACCOUNT} secrets; delete one first.`);
    }
    const { created, secret } = await store.secrets.put(accountId, name, secrets.seal(value, secretContext(accountId, name)));
    return reply.status(created ? 201 : 200).send(secretView(secret));
  });

  app.delete('/v1/secrets/:name', { config: { auth: 'jwt' }, schema: { params: NameParams, response: { 204: noBody('Deleted') } } }, async (request, reply) => {
    const { name } = request.params;
    if (!(await store.secrets.delete(accountOf(request.principal), name))) {
      throw new AppError('secret_not_found', `This account has no secret named "${name}".`);
    }
    return reply.status(204).send();
  });
}
