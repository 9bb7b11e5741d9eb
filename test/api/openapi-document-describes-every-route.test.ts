// GET /v1/openapi.json: an OpenAPI 3.1 document a real validator accepts, generated from the
// route schemas, with every route's credentials and error answers. Every route the server
// registers declares what it answers, and answers what it declares.
import { compileErrors, validate } from '@readme/openapi-parser';
import Fastify from 'fastify';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiContractPlugin } from '../../server/http/api-contract.ts';
import { servicesPlugin, type Services } from '../../server/http/services.ts';
import { errorHandlerPlugin } from '../../server/http/error-handler.ts';
import { GUESSING_GAME_YAML, startTestServer, type TestServer } from '../support/server.ts';

interface Operation {
  security?: Array<Record<string, string[]>>;
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

describe('the OpenAPI document', () => {
  let server: TestServer;
  let document: Document;
  beforeAll(async () => {
    server = await startTestServer();
    const response = await server.request('GET', '/v1/openapi.json');
    expect(response.status).toBe(200);
    document = response.body as Document;
  });
  afterAll(async () => {
    await server.close();
  });

  it('is served without a credential and validates as OpenAPI 3.1', async () => {
    expect(document.openapi).toBe('3.1.0');
    expect((document as unknown as { components: { schemas: Record<string, { properties: object }> } }).components.schemas.ErrorBody!.properties).toHaveProperty('error');
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(result.warnings).toEqual([]);
  });

  it('lists every route the server registers, except the studio\'s files', () => {
    const listed = new Set(Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`)));
    const registered = server.app.routeContracts
      .filter((route) => !route.hidden && route.method !== 'HEAD')
      .map((route) => `${route.method} ${route.url.replace(/:([A-Za-z_]+)/g, '{$1}')}`);
    expect(registered.length).toBeGreaterThan(40);
    expect(registered.filter((route) => !listed.has(route))).toEqual([]);
    for (const route of ['POST /v1/flows', 'GET /v1/flows/{flow_id}/tests/runs/{run_id}', 'POST /offer', 'GET /ice-servers', 'GET /capabilities', 'GET /flow-editor']) {
      expect(listed, route).toContain(route);
    }
  });

  it('gives every route a success answer with a schema and the shared error body for 4XX and 5XX', () => {
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const statuses = Object.keys(operation.responses);
        expect(statuses.some((status) => /^[123]\d\d$/.test(status)), `${method} ${path}`).toBe(true);
        for (const status of ['4XX', '5XX']) {
          expect(operation.responses[status]?.content?.['application/json']?.schema, `${method} ${path} ${status}`).toEqual({ $ref: '#/components/schemas/ErrorBody' });
        }
      }
    }
  });

  it('says which credential each route takes', () => {
    const security = (method: string, path: string) => document.paths[path]![method]!.security;
    expect(security('patch', '/v1/providers')).toEqual([{ bearer: [] }]);
    expect(security('post', '/v1/sessions')).toEqual([{ serviceKey: [] }]);
    expect(security('get', '/v1/flows')).toEqual([{ bearer: [] }, { serviceKey: [] }]);
    expect(security('post', '/offer')).toEqual([{ bearer: [] }, { serviceKey: [] }, { sessionToken: [] }]);
    expect(security('get', '/health')).toEqual([]);
    expect(security('get', '/v1/openapi.json')).toEqual([]);
  });

  it('describes request bodies and query parameters from the same schemas that validate them', () => {
    const createFlow = document.paths['/v1/flows']!.post as Operation & { requestBody?: { content: Record<string, { schema: { required?: string[] } }> } };
    expect(createFlow.requestBody?.content['application/json']?.schema.required).toEqual(['name', 'yaml_content']);
    const events = document.paths['/v1/sessions/{session_id}/events']!.get as Operation & { parameters?: Array<{ name: string; in: string }> };
    expect(events.parameters?.map((p) => `${p.in}:${p.name}`).sort()).toEqual(['path:session_id', 'query:after', 'query:limit']);
  });
});

describe('answers checked against their schemas', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('lets a representative walk through the API pass, each answer matching its route\'s schema', async () => {
    const signup = await server.request('POST', '/auth/signup', { body: { email: 'contract@example.com', password: 'a long enough password 1' } });
    expect(signup.status).toBe(200);
    const jwt = signup.body.access_token as string;
    const key = await server.request('POST', '/auth/api-keys?label=contract', { jwt });
    expect(key.status).toBe(201);
    const flow = await server.request('POST', '/v1/flows', { jwt, body: { name: 'Guessing game', yaml_content: GUESSING_GAME_YAML } });
    expect(flow.status).toBe(201);
    const id = flow.body.id as string;
    const answers = await Promise.all([
      server.request('GET', '/v1/flows', { jwt }),
      server.request('GET', `/v1/flows/${id}`, { jwt }),
      server.request('GET', `/v1/flows/${id}/draft`, { jwt }),
      server.request('GET', `/v1/flows/${id}/versions`, { jwt }),
      server.request('GET', `/v1/flows/${id}/versions/1`, { jwt }),
      server.request('GET', `/v1/flows/${id}/json`, { jwt }),
      server.request('GET', `/v1/flows/${id}/export/pipecat`, { jwt }),
      server.request('GET', '/v1/credits/balance', { jwt }),
      server.request('GET', '/v1/providers', { jwt }),
      server.request('GET', '/v1/sessions', { jwt }),
      server.request('GET', '/v1/secrets', { jwt }),
      server.request('GET', '/v1/webhooks', { jwt }),
      server.request('GET', '/auth/api-keys', { jwt }),
      server.request('GET', '/capabilities'),
      server.request('GET', '/health'),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    const session = await server.request('POST', '/v1/sessions', { apiKey: key.body.key, body: { flow_id: id } });
    expect(session.status).toBe(200);
    const missing = await server.request('GET', '/v1/flows/nope', { jwt });
    expect(missing.status).toBe(404);
    const invalid = await server.request('POST', '/v1/flows', { jwt, body: { name: '' } });
    expect(invalid.status).toBe(422);
  });
});

describe('the route contract', () => {
  const services = { config: {} } as unknown as Services;

  it('refuses to start a server with a route that does not say what it answers', async () => {
    const app = Fastify();
    await app.register(servicesPlugin, { services });
    await app.register(apiContractPlugin, {});
    app.get('/v1/undocumented', async () => ({ ok: true }));
    await expect(app.ready()).rejects.toThrow(/GET \/v1\/undocumented/);
    await app.close().catch(() => {});
  });

  it('turns an answer that breaks its schema into a 500 when answers are checked', async () => {
    const app = Fastify();
    await app.register(servicesPlugin, { services });
    await app.register(errorHandlerPlugin);
    await app.register(apiContractPlugin, { checkResponses: true });
    app.get('/v1/thing', { schema: { response: { 200: z.object({ count: z.number() }) } } }, async () => ({ count: 'three' }) as never);
    const stderr = process.stderr.write;
    process.stderr.write = () => true;
    try {
      const response = await app.inject({ method: 'GET', url: '/v1/thing' });
      expect(response.statusCode).toBe(500);
      expect(response.json()).toEqual({ error: { code: 'internal', message: 'Something went wrong on our side.' } });
    } finally {
      process.stderr.write = stderr;
      await app.close();
    }
  });
});
