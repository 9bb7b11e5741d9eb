// Establishes who is calling before any body is read and enforces each route's auth rule (who may
// call what, docs/api.md). Routes declare their rule in `config.auth`; a route that forgets gets
// the strictest common rule (a JWT or an API key), never none. Each authenticated request counts
// against its credential's rate limit (rate-limits.ts).
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { ApiKeyRefusedError, type ApiKey } from '../store/store.ts';
import { digest, looksLikeApiKey } from '../security/opaque-tokens.ts';
import { AccessTokens } from '../security/access-tokens.ts';
import type { AuthRule, Principal } from './services.ts';

interface Credentials {
  bearer: string | null;
  apiKey: string | null;
}

function readCredentials(request: FastifyRequest, fromQuery: boolean): Credentials {
  const authorization = request.headers.authorization;
  const serviceKey = request.headers['x-service-key'];
  let bearer: string | null = null;
  let apiKey = typeof serviceKey === 'string' && serviceKey.trim() ? serviceKey.trim() : null;
  if (fromQuery && !authorization && !apiKey) {
    // Browsers cannot set headers on a WebSocket: the engine router also reads a short-lived
    // access token from the query. Never an API key (refused in authenticateRequest).
    const query = request.query as Record<string, unknown>;
    if (typeof query.access_token === 'string' && query.access_token) bearer = query.access_token;
  }
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) throw new AppError('invalid_credentials', 'The Authorization header must be "Bearer <token>".');
    // SDKs that only know bearer auth may send an API key that way; it is still an API key
    // (sent in both headers, it is one credential; two different keys are ambiguous).
    if (looksLikeApiKey(match[1]!)) {
      if (apiKey && apiKey !== match[1]) throw new AppError('bad_request', 'Two different API keys were sent; send one credential.');
      apiKey = match[1]!;
    } else bearer = match[1]!;
  }
  return { bearer, apiKey };
}

/**
 * The caller; with `deferKey`, a key alone that the store can check with the request's first read
 * (PostgreSQL, a key this node has seen) is not waited for: request.keyCheck holds its check.
 */
async function authenticate(app: FastifyInstance, request: FastifyRequest, credentials: Credentials, deferKey: boolean): Promise<Principal> {
  const { store, accessTokens } = app.services;
  let fromKey: Principal | null = null;
  if (credentials.apiKey && !credentials.bearer && deferKey) {
    const deferred = store.apiKeys.checkWithFirstRead?.(digest(credentials.apiKey));
    if (deferred) {
      request.keyCheck = deferred.check;
      return { kind: 'api_key', accountId: deferred.key.accountId, apiKeyId: deferred.key.id };
    }
  }
  if (credentials.apiKey) {
    fromKey = keyPrincipal(app, await store.apiKeys.findActiveByHash(digest(credentials.apiKey)));
    if (!credentials.bearer) return fromKey;
  }
  const verified = await accessTokens.verify(credentials.bearer!);
  if (!verified.ok) throw new AppError(verified.reason === 'expired' ? 'token_expired' : 'invalid_credentials');
  const account = await store.accounts.findById(verified.accountId);
  if (!account) throw new AppError('invalid_credentials', 'The account of this token no longer exists.');
  if (AccessTokens.signedOutSince(verified, account)) throw new AppError('invalid_credentials', 'This access token was issued before the account signed out: sign in again.');
  if (fromKey) {
    // Both headers: they must agree on the account, or the request is ambiguous about whose
    // data it acts on. The key, the more specific credential, decides the kind.
    if (fromKey.accountId !== verified.accountId) {
      throw new AppError('bad_request', 'The API key and the access token belong to different accounts; send one credential.');
    }
    return fromKey;
  }
  return { kind: 'jwt', accountId: verified.accountId };
}

/** The caller an active key names (its use recorded), or the 401 for a key that is not. */
function keyPrincipal(app: FastifyInstance, key: Pick<ApiKey, 'id' | 'accountId'> | null): Principal {
  if (!key) throw new AppError('invalid_credentials', 'The API key is unknown or revoked.');
  // Throttled inside the repository; a failed touch must not fail the request.
  app.services.store.apiKeys.touch(key.id, Date.now() / 1000).catch((error: unknown) => app.log.warn({ err: error }, 'could not record API key use'));
  return { kind: 'api_key', accountId: key.accountId, apiKeyId: key.id };
}

function allows(rule: AuthRule, principal: Principal): boolean {
  switch (rule) {
    case 'none':
      return true;
    case 'jwt':
      return principal.kind === 'jwt';
    case 'api_key':
      return principal.kind === 'api_key';
    case 'jwt_or_api_key':
      return principal.kind === 'jwt' || principal.kind === 'api_key';
    case 'engine':
      return true;
  }
}

const RULE_WORDS: Record<AuthRule, string> = {
  none: 'no credential',
  jwt: 'a JWT access token (Authorization: Bearer <access_token> from /auth/login)',
  api_key: 'an API key (X-Service-Key: <key>)',
  jwt_or_api_key: 'a JWT access token or an API key',
  engine: 'a JWT access token, an API key, or ?session_token=<token from POST /v1/sessions>',
};

/**
 * Establishes the caller for `rule` and sets request.principal (and claimedSession). With the
 * engine rule a `?session_token=` is either used up (`startsSession`: it opens the session) or
 * only checked (e.g. /ice-servers, so the same token still opens the session after).
 */
export async function authenticateRequest(app: FastifyInstance, request: FastifyRequest, rule: AuthRule, startsSession: boolean, deferKey = false): Promise<void> {
  refuseKeyInUrl(request);
  if (rule === 'none') return;
  if (rule === 'engine') {
    const token = (request.query as Record<string, unknown>).session_token;
    if (typeof token === 'string' && token) {
      const now = Date.now() / 1000;
      const session = startsSession
        ? await app.services.store.sessions.claim(digest(token), now)
        : await app.services.store.sessions.findByTokenHash(digest(token));
      if (!session || (!startsSession && (session.status !== 'created' || session.expiresAt <= now))) throw new AppError('session_token_invalid');
      request.principal = { kind: 'session', accountId: session.accountId, sessionId: session.id };
      request.claimedSession = startsSession ? session : null;
      return;
    }
  }
  const credentials = readCredentials(request, rule === 'engine');
  if (!credentials.bearer && !credentials.apiKey) {
    throw new AppError('missing_credentials', `This endpoint needs ${RULE_WORDS[rule]}.`);
  }
  admit(app, request, rule, await authenticate(app, request, credentials, deferKey && rule !== 'engine'));
}

/** A key in a URL ends up in proxy logs, browser history and Referer headers: refused on every route, before anything else, even where no credential is needed. */
function refuseKeyInUrl(request: FastifyRequest): void {
  if (typeof (request.query as Record<string, unknown> | undefined)?.api_key === 'string') {
    throw new AppError('bad_request', 'API keys are never sent in URLs: use the X-Service-Key header, or hand the browser a session token from POST /v1/sessions.');
  }
}

/** The caller, once established, held to the route's rule and its credential's rate limit. */
function admit(app: FastifyInstance, request: FastifyRequest, rule: AuthRule, principal: Principal): void {
  if (!allows(rule, principal)) {
    throw new AppError('wrong_credential_kind', `This endpoint needs ${RULE_WORDS[rule]}.`);
  }
  app.limitCredential(principal);
  request.principal = principal;
}

/**
 * authenticateRequest where it needs no store round trip, settled without a promise: a route that
 * takes no credential, or an API key alone that the store keeps in this process (the embedded
 * store; revoking a key clears what it keeps). False when the store must be asked.
 */
function authenticatedAtOnce(app: FastifyInstance, request: FastifyRequest, rule: AuthRule): boolean {
  refuseKeyInUrl(request);
  if (rule === 'none') return true;
  const findKept = app.services.store.apiKeys.findActiveByHashKept;
  if (rule === 'engine' || !findKept) return false;
  const credentials = readCredentials(request, false);
  if (!credentials.apiKey || credentials.bearer) return false;
  const kept = findKept(digest(credentials.apiKey));
  if (kept === undefined) return false;
  admit(app, request, rule, keyPrincipal(app, kept));
  return true;
}

export const authPlugin = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('principal', null);
    app.decorateRequest('claimedSession', null);
    app.decorateRequest('keyCheck', null);

    // Registered after the rate limits, so a flood is refused before any credential is looked up.
    // A callback: what needs no store round trip is settled at once, without a promise.
    app.addHook('onRequest', (request, _reply, done) => {
      // request.routeOptions builds a new object on each read: read once.
      const { url, config } = request.routeOptions;
      // Unknown routes fall through to the 404 handler without asking for credentials.
      if (url === undefined || config.authInHandler) return done();
      const rule = config.auth ?? 'jwt_or_api_key';
      try {
        if (authenticatedAtOnce(app, request, rule)) return done();
      } catch (error) {
        return done(error as Error);
      }
      // A read (or a write route that reads first) need not wait for its API key on its own:
      // where the store can, the key is checked by the request's first statement, in the same
      // round trip (server/store/postgres/database.ts, checkingKey). Writes still wait for it.
      const deferKey = request.method === 'GET' || request.method === 'HEAD' || config.keyCheckedWithFirstRead === true;
      authenticateRequest(app, request, rule, config.startsSession ?? false, deferKey).then(
        () => done(),
        (error: unknown) => done(error as Error),
      );
    });

    // The handler (and the hooks just before it) run inside the key's check, so the store's
    // first statement carries it.
    app.addHook('preHandler', (request, _reply, done) => {
      if (request.keyCheck) request.keyCheck.run(done);
      else done();
    });

    // Nothing is answered before the key is known active: a handler that sent no statement (or
    // whose reads all came back empty) has it checked here, alone, and a refused key turns the
    // answer into the 401 the door would have given.
    // A callback, so that the answers with no check pending (every one on the embedded store) pay
    // no promise for it; the check itself is awaited below.
    app.addHook('onSend', (request, reply, payload, done) => {
      if (!request.keyCheck) return done(null, payload);
      confirmKeyBeforeAnswer(request, reply, payload).then((sent) => done(null, sent), done);
    });
    async function confirmKeyBeforeAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
      const check = request.keyCheck!;
      request.keyCheck = null;
      try {
        await check.confirm();
      } catch (error) {
        // The refusal was already answered (the handler's read threw it).
        if (error instanceof ApiKeyRefusedError && reply.statusCode === 401) return payload;
        (payload as { destroy?: () => void } | null)?.destroy?.();
        throw error;
      }
      const principal = request.principal;
      if (principal?.kind === 'api_key') {
        app.services.store.apiKeys.touch(principal.apiKeyId, Date.now() / 1000).catch((error: unknown) => app.log.warn({ err: error }, 'could not record API key use'));
      }
      return payload;
    }
  },
  { name: 'voxflow-auth', dependencies: ['voxflow-services', 'voxflow-rate-limits'] },
);
