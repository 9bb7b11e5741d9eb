// The server serves the studio's build at / and at every screen's path, with a strict CSP, and
// its hashed assets with a year's cache; a missing build is a clear page, not a crash.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../support/server.ts';

const PAGE = '<!doctype html><title>Voxflow Studio</title><script type="module" src="/assets/index-abc123.js"></script>';
let dir: string;
let server: TestServer;
let unbuilt: TestServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'voxflow-studio-'));
  await mkdir(join(dir, 'assets'));
  await writeFile(join(dir, 'index.html'), PAGE);
  await writeFile(join(dir, 'assets', 'index-abc123.js'), 'console.log("studio")');
  await writeFile(join(dir, 'assets', 'index-abc123.css'), 'body{}');
  [server, unbuilt] = await Promise.all([startTestServer({}, { studioDir: dir }), startTestServer({}, { studioDir: null })]);
});
afterAll(async () => {
  await Promise.all([server?.close(), unbuilt?.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('the studio pages', () => {
  it.each(['/', '/flow-editor', '/flow-editor?flow=abc', '/flow-editor?flow=abc&state=playing', '/sessions', '/session?id=abc', '/phone-numbers', '/experiments?flow=abc', '/settings', '/sign-in', '/settings/'])('answers %s with the studio page and a strict CSP', async (path) => {
    const response = await server.request('GET', path);
    expect(response.status).toBe(200);
    expect(response.text).toBe(PAGE);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-eval');
    expect(response.headers.get('cache-control')).toBe('no-cache');
  });

  it('serves hashed assets with their type and a year of caching', async () => {
    const script = await server.request('GET', '/assets/index-abc123.js');
    expect(script.status).toBe(200);
    expect(script.text).toBe('console.log("studio")');
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).toContain('immutable');
    expect((await server.request('GET', '/assets/index-abc123.css')).headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('answers an unknown asset or a path outside the build with 404, never a file from elsewhere', async () => {
    for (const path of ['/assets/missing.js', '/assets/../index.html', '/assets/%2e%2e/%2e%2e/package.json', '/assets/..%2f..%2fpackage.json']) {
      const response = await server.request('GET', path);
      expect(response.status, path).toBe(404);
      expect(response.text).not.toContain('"name": "voxflow"');
    }
  });

  it("answers a browser's unknown address with the studio (its not-found screen) and 404; the API's unknown paths, assets and non-browsers with the coded JSON 404", async () => {
    const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    for (const path of ['/flowz', '/flows/abc', '/sessions/abc?x=1']) {
      const page = await server.request('GET', path, { headers: html });
      expect(page.status, path).toBe(404);
      expect(page.text).toBe(PAGE);
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    }
    for (const path of ['/v1/nothing', '/auth/nothing', '/assets/missing.js', '/ws/nothing', '/ready/x']) {
      const json = await server.request('GET', path, { headers: html });
      expect(json.status, path).toBe(404);
      expect(json.body.error.code, path).toBe('not_found');
    }
    const script = await server.request('GET', '/flowz');
    expect(script.status).toBe(404);
    expect(script.body.error).toMatchObject({ code: 'not_found', message: 'No route GET /flowz.' });
    expect((await server.request('POST', '/flowz', { headers: html, body: {} })).body.error.code).toBe('not_found');
    // Without a build there is no studio to show: the coded error.
    expect((await unbuilt.request('GET', '/flowz', { headers: html })).body.error.code).toBe('not_found');
  });

  it('without a build, answers / with 503 and says how to build the studio, while the API works', async () => {
    const page = await unbuilt.request('GET', '/');
    expect(page.status).toBe(503);
    expect(page.text).toContain('npm run build:renderer');
    expect((await unbuilt.request('GET', '/health')).status).toBe(200);
  });
});
