// The studio's built assets (dist/renderer, built by the e2e project's setup)
// are served pre-compressed with ETags, and its source maps are not served.
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

describe('the studio build', () => {
  const assets = new URL('../../dist/renderer/assets/', import.meta.url);
  const script = () => readdirSync(assets).find((f) => /^index-.*\.js$/.test(f))!;

  it('is served brotli or gzip from files compressed at build time, with an ETag, and plain to clients that take neither', async () => {
    const path = `/assets/${script()}`;
    const raw = async (encoding: string) => {
      // fetch would decode the body; the header says what was sent.
      const response = await fetch(server.url + path, { headers: { 'accept-encoding': encoding } });
      await response.arrayBuffer();
      return response;
    };
    const br = await raw('br, gzip');
    expect(br.status).toBe(200);
    expect(br.headers.get('content-encoding')).toBe('br');
    expect(br.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(br.headers.get('etag')).toBeTruthy();
    expect(br.headers.get('vary')).toMatch(/accept-encoding/i);
    expect((await raw('gzip')).headers.get('content-encoding')).toBe('gzip');
    expect((await raw('identity')).headers.get('content-encoding')).toBeNull();
  });

  it('does not serve source maps, nor the compressed copies under their own names', async () => {
    const name = script();
    expect(readdirSync(assets)).toContain(`${name}.map`);
    expect((await server.request('GET', `/assets/${name}.map`)).status).toBe(404);
    expect((await server.request('GET', `/assets/${name}.br`)).status).toBe(404);
  });
});
