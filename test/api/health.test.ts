import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

// The engine router's /health table in the spec: the _configured fields are booleans, the others strings.
const STRING_FIELDS = ['status', 'service', 'transport', 'stt_provider', 'tts_provider', 'llm_provider', 'turn_provider'];
// store_writable is ours, so a load balancer takes the node out: false when the store refuses
// writes.
const BOOLEAN_FIELDS = ['stt_configured', 'tts_configured', 'llm_configured', 'turn_configured', 'system_prompt_configured', 'store_writable'];
// Also ours: the least free disk space where the node writes, and why it is degraded (empty when ok).
const OTHER_FIELDS = ['disk_free_bytes', 'problems'];

function expectHealthShape(body: Record<string, unknown>) {
  expect(body.status).toBe('ok');
  expect(body.service).toBe('voxflow');
  for (const field of STRING_FIELDS) expect(typeof body[field], field).toBe('string');
  for (const field of BOOLEAN_FIELDS) expect(typeof body[field], field).toBe('boolean');
}

describe('GET /health on a server with default providers', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers 200 {status: ok, service: voxflow} without a credential', async () => {
    const response = await server.request('GET', '/health');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'ok', service: 'voxflow' });
  });

  it('carries every field of the engine router\'s health table with the right type', async () => {
    const response = await server.request('GET', '/health');
    expectHealthShape(response.body);
    expect(Object.keys(response.body).sort()).toEqual([...STRING_FIELDS, ...BOOLEAN_FIELDS, ...OTHER_FIELDS].sort());
    expect(response.body.problems).toEqual([]);
  });

  it('reports speech-to-text and the language model as not configured, and the embedded speech output as configured', async () => {
    const { body } = await server.request('GET', '/health');
    expect(body).toMatchObject({ stt_provider: 'none', stt_configured: false, llm_provider: 'none', llm_configured: false });
    expect(body).toMatchObject({ tts_provider: 'flite', tts_configured: true });
  });

  it('ignores a credential, even a broken one', async () => {
    const response = await server.request('GET', '/health', { headers: { authorization: 'Basic nonsense', 'x-service-key': 'vfk_nope' } });
    expect(response.status).toBe(200);
    expect(response.body.status).toBe('ok');
  });
});

describe('GET /health on a server with paid providers', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      providers: { stt: { provider: 'deepgram', apiKey: 'dg-health-secret' }, llm: { provider: 'openai', apiKey: 'sk-health-secret' }, tts: { provider: 'openai', apiKey: 'sk-health-secret' } },
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it('names the providers and reports them configured, without showing their keys', async () => {
    const response = await server.request('GET', '/health');
    expectHealthShape(response.body);
    expect(response.body).toMatchObject({
      stt_provider: 'deepgram',
      stt_configured: true,
      llm_provider: 'openai',
      llm_configured: true,
      tts_provider: 'openai',
      tts_configured: true,
    });
    expect(response.text).not.toContain('health-secret');
  });
});
