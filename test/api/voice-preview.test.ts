// POST /v1/voices/preview: the voice picker's preview. The server's embedded voice speaks a short
// line in the voice asked for (each voice sounds different), as a WAV; a voice it lacks is a 422
// naming the ones it has; past three in ten seconds an account is told to wait; a credential is needed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWav } from '../../server/audio/pcm.ts';
import { FLITE_VOICES } from '../../server/providers/catalog.ts';
import { createAccount, startTestServer, type TestServer } from '../support/server.ts';
import { expectError } from './error-shape.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ providers: { tts: { provider: 'flite' } } });
});
afterAll(async () => {
  await server?.close();
});

async function preview(apiKey: string, body: unknown) {
  const response = await fetch(`${server.url}/v1/voices/preview`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-key': apiKey }, body: JSON.stringify(body) });
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) };
}

const rms = (pcm: Int16Array) => Math.sqrt(pcm.reduce((sum, s) => sum + s * s, 0) / Math.max(1, pcm.length));

describe('a voice preview', () => {
  it('speaks a short line in the voice asked for, as a WAV, each voice its own', async () => {
    const { apiKey } = await createAccount(server);
    const slt = await preview(apiKey, { voice: 'slt' });
    expect(slt.status).toBe(200);
    expect(slt.headers.get('content-type')).toBe('audio/wav');
    expect(slt.headers.get('x-voice-provider')).toBe('flite');
    const a = decodeWav(slt.bytes);
    expect(a.sampleRate).toBe(16_000);
    // A sentence: over a second of sound, not silence.
    expect(a.pcm.length / a.sampleRate).toBeGreaterThan(1);
    expect(rms(a.pcm)).toBeGreaterThan(300);

    const awb = await preview(apiKey, { voice: 'awb', text: 'Hello there.' });
    expect(awb.status).toBe(200);
    const b = decodeWav(awb.bytes);
    expect(b.pcm.length).toBeGreaterThan(0);
    // Another voice and line: not the same audio.
    expect(b.pcm.length).not.toBe(a.pcm.length);
  }, 60_000);

  it('refuses a voice the server\'s voice lacks, naming the ones it has', async () => {
    const { apiKey } = await createAccount(server);
    const response = await server.request('POST', '/v1/voices/preview', { apiKey, body: { voice: 'nova' } });
    expectError(response, 422, 'invalid_request');
    for (const voice of FLITE_VOICES) expect(response.body.error.message).toContain(voice);
    expectError(await server.request('POST', '/v1/voices/preview', { apiKey, body: { voice: 'slt', text: 'x'.repeat(201) } }), 422, 'invalid_request');
  });

  it('lets an account ask three times in ten seconds, then says to wait', async () => {
    const { apiKey } = await createAccount(server);
    for (let i = 0; i < 3; i++) expect((await preview(apiKey, { voice: 'kal', text: 'One.' })).status).toBe(200);
    const refused = await server.request('POST', '/v1/voices/preview', { apiKey, body: { voice: 'kal', text: 'One.' } });
    expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another account is not held up by it.
    const other = await createAccount(server);
    expect((await preview(other.apiKey, { voice: 'kal', text: 'One.' })).status).toBe(200);
  }, 60_000);

  it('needs a credential', async () => {
    expectError(await server.request('POST', '/v1/voices/preview', { body: { voice: 'slt' } }), 401, 'missing_credentials');
  });
});
