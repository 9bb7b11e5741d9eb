// An account's own "OpenAI or compatible" key goes to the account's own base URL
// with its own model, never to the server's model endpoint; a key is checked when it is saved;
// a call that fails because of it says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { useVoiceRig } from '../support/voice-server.ts';

const OWN_KEY = 'sk-own-account-key-1234';

describe("an account's own model server", () => {
  const rig = useVoiceRig({ tts: 'openai', rules: [{ when: { lastRole: 'none' }, respond: { text: 'Hello from the server model.' } }] });
  let own: FakeOpenAI;
  beforeAll(async () => {
    own = await startFakeOpenAI({ apiKey: OWN_KEY, rules: [{ when: { lastRole: 'none' }, respond: { text: 'Hello from your own model.' } }] });
  });
  afterAll(async () => own?.close());

  const patch = (body: Record<string, unknown>) => rig.server.request('PATCH', '/v1/providers', { jwt: rig.account.jwt, body });

  it('refuses a key the provider refuses, saving nothing', async () => {
    const refused = await patch({ llm_api_key: 'sk-not-the-right-key-99', llm_base_url: own.url, llm_model: 'own-model' });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('provider_key_rejected');
    expect(refused.body.error.message).toMatch(/refused this key \(401/);
    const view = await rig.server.request('GET', '/v1/providers', { apiKey: rig.account.apiKey });
    expect(view.body).toMatchObject({ llm_api_key: null, llm_base_url: null, llm_model: null });
  });

  it('sends the own key to the own base URL with the own model, and nothing to the server’s model', async () => {
    const saved = await patch({ llm_api_key: OWN_KEY, llm_base_url: own.url, llm_model: 'own-model' });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({ llm_provider: 'openai', llm_base_url: own.url, llm_model: 'own-model' });
    expect(saved.body.llm_api_key).not.toContain(OWN_KEY);
    expect(saved.body.warnings).toBeUndefined();

    const serverChatsBefore = rig.openai.requests.filter((r) => r.path === '/v1/chat/completions').length;
    const client = await rig.connect({});
    const greeting = await client.waitFor('transcript', (e) => e.role === 'agent');
    expect(greeting.text).toBe('Hello from your own model.');
    const chats = own.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(chats.map((r) => (r.body as { model: string }).model)).toEqual(['own-model']);
    expect(chats[0]!.headers.authorization).toBe(`Bearer ${OWN_KEY}`);
    expect(rig.openai.requests.filter((r) => r.path === '/v1/chat/completions').length).toBe(serverChatsBefore);
    client.send({ type: 'end' });
    await client.waitFor('session_ended');
  });

  it('says it is the account’s own key when the provider refuses it during a call', async () => {
    own.setApiKey('sk-rotated-at-the-provider');
    try {
      const client = await rig.connect({});
      const error = await client.waitFor('error');
      expect(error.message).toMatch(/your account's own key/);
      expect(error.message).toMatch(/Settings → Provider keys/);
      client.close();
    } finally {
      own.setApiKey(OWN_KEY);
    }
  });
});

describe('a hosted server', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ host: '0.0.0.0', publicUrl: 'https://voice.example.com' });
  });
  afterAll(async () => server?.close());

  it("will not send an account's key to its own network", async () => {
    const signup = await fetch(`${server.url.replace('0.0.0.0', '127.0.0.1')}/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', host: 'voice.example.com' },
      body: JSON.stringify({ email: `hosted-${Date.now()}@example.com`, password: 'correct horse battery staple' }),
    });
    const { access_token } = (await signup.json()) as { access_token: string };
    for (const target of ['http://127.0.0.1:8000/v1', 'http://169.254.169.254/latest', 'http://10.1.2.3/v1', 'http://[::1]:9000/v1']) {
      const response = await fetch(`${server.url.replace('0.0.0.0', '127.0.0.1')}/v1/providers`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${access_token}`, host: 'voice.example.com' },
        body: JSON.stringify({ llm_api_key: OWN_KEY, llm_base_url: target }),
      });
      expect(response.status, target).toBe(422);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/own network/);
    }
  });
});
