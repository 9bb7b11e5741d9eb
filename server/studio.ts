// The studio (renderer/, built by Vite into dist/renderer) served from the server's own origin:
// `/` and every screen path get the app's page, `/assets/*` its hashed files. Electron loads the
// same URLs, so desktop and browser run one studio against one API (docs/studio.md).
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { mediaBody } from './http/api-contract.ts';
import { preloadWebRtc } from './transports/webrtc/index.ts';

/** Paths the studio's router understands (renderer/src/lib/router.svelte.ts). */
export const STUDIO_PAGES = ['/', '/flow-editor', '/sessions', '/session', '/phone-numbers', '/experiments', '/settings', '/sign-in'] as const;


// The studio's own script only; inline style attributes are how Svelte and xyflow position
// things, so style-src allows them. The microphone goes over WebRTC to this same origin.
const STUDIO_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob: mediastream:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-cache',
  'content-security-policy': STUDIO_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'permissions-policy': 'microphone=(self), camera=(), geolocation=()',
};

/**
 * The built studio: dist/renderer, seen from the sources (server/ → ../dist/renderer) or from the
 * bundle (dist/server/ → ../renderer). From the sources, ../renderer is the Vite source folder,
 * whose index.html loads /src/main.ts: a build has an assets folder, the sources have none.
 */
export function findStudioDir(): string | null {
  const candidates = [new URL('../dist/renderer/', import.meta.url), new URL('../renderer/', import.meta.url)];
  for (const candidate of candidates) {
    const dir = fileURLToPath(candidate);
    if (existsSync(join(dir, 'index.html')) && existsSync(join(dir, 'assets'))) return dir;
  }
  return null;
}

const NOT_BUILT_PAGE = `<!doctype html><meta charset="utf-8"><title>Voxflow</title>
<body style="font:15px system-ui;max-width:40em;margin:4em auto;padding:0 1em">
<h1>The studio is not built</h1><p>The API and the voice endpoints are running. To build the studio, run
<code>npm run build:renderer</code> (or start with <code>npm run serve</code>, which builds it) and reload.</p>
<p>The WebRTC test page is at <a href="/test">/test</a>.</p></body>`;

export async function studioRoutes(app: FastifyInstance, options: { dir?: string | null } = {}): Promise<void> {
  const dir = options.dir === undefined ? findStudioDir() : options.dir;
  const page = dir && existsSync(join(dir, 'index.html')) ? await readFile(join(dir, 'index.html')) : null;

  // Every studio path is open: the studio signs in by itself.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, auth: 'none' };
  });

  const sendPage = async (reply: FastifyReply) => {
    if (!page) return reply.status(503).headers(PAGE_HEADERS).send(NOT_BUILT_PAGE);
    // The studio talks to its flows over WebRTC: werift loads while the studio starts.
    preloadWebRtc(app.log);
    return reply.headers(PAGE_HEADERS).send(page);
  };
  const page200 = mediaBody('The studio (a single-page app: every studio path is the same page)', ['text/html']);
  const page503 = mediaBody('The studio is not built: a page saying how to build it', ['text/html']);
  if (page) app.services.studioPage = { body: page, headers: PAGE_HEADERS };
  for (const path of STUDIO_PAGES) app.get(path, { schema: { response: { 200: page200, 503: page503 } } }, async (_request, reply) => sendPage(reply));

  if (!dir || !existsSync(join(dir, 'assets'))) return;
  // RFC 9239: JavaScript is text/javascript (the mime table still says application/javascript,
  // and @fastify/static sets a pre-compressed file's type after its setHeaders hook).
  app.addHook('onSend', async (_request, reply, payload) => {
    if (String(reply.getHeader('content-type') ?? '').startsWith('application/javascript')) void reply.header('content-type', 'text/javascript; charset=utf-8');
    return payload;
  });
  // @fastify/static with `wildcard: false` routes only the files that exist at start-up, so a
  // request path never reaches the file system (anything else is the API's 404). Vite puts a
  // content hash in every asset name, so a file never changes under its name. Loaded only here,
  // with a studio to serve: it and its glob and mime tables cost a server without one up to
  // 0.15 s of CPU at every start (a profile under load).
  const { default: fastifyStatic } = await import('@fastify/static');
  await app.register(fastifyStatic, {
    root: join(dir, 'assets'),
    prefix: '/assets/',
    wildcard: false,
    index: false,
    // Source maps stay on disk for local debugging but are not served: they would hand out the
    // studio's whole source (about 5 MB) to anyone. .br and .gz are served by preCompressed.
    globIgnore: ['**/*.map', '**/*.br', '**/*.gz'],
    preCompressed: true,
    immutable: true,
    maxAge: '365d',
    setHeaders: (reply) => void reply.header('x-content-type-options', 'nosniff'),
  });
}
