// The studio (renderer/, built by Vite into dist/renderer) served from the server's own origin:
// `/` and every screen path get the app's page, `/assets/*` its hashed files. Electron loads the
// same URLs, so desktop and browser run one studio against one API (DESIGN §8).
import { readFile, readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Paths the studio's router understands (renderer/src/lib/router.svelte.ts). */
export const STUDIO_PAGES = ['/', '/flow-editor', '/sessions', '/settings', '/sign-in'] as const;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.wav': 'audio/wav',
  '.yaml': 'text/yaml; charset=utf-8',
};

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
  'content-type': CONTENT_TYPES['.html']!,
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

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'));
}

const NOT_BUILT_PAGE = `<!doctype html><meta charset="utf-8"><title>Voxflow</title>
<body style="font:15px system-ui;max-width:40em;margin:4em auto;padding:0 1em">
<h1>The studio is not built</h1><p>The API and the voice endpoints are running. To build the studio, run
<code>npm run build:renderer</code> (or start with <code>npm run serve</code>, which builds it) and reload.</p>
<p>The WebRTC test page is at <a href="/test">/test</a>.</p></body>`;

export async function studioRoutes(app: FastifyInstance, options: { dir?: string | null } = {}): Promise<void> {
  const dir = options.dir === undefined ? findStudioDir() : options.dir;
  // Only files that exist at start-up are served: a request path never reaches the file system.
  const files = new Set(dir ? await listFiles(dir) : []);
  const cache = new Map<string, Promise<Buffer>>();
  const read = (file: string) => {
    let content = cache.get(file);
    if (!content) {
      content = readFile(join(dir!, file));
      content.catch(() => cache.delete(file));
      cache.set(file, content);
    }
    return content;
  };

  const sendPage = async (reply: FastifyReply) => {
    if (!dir || !files.has('index.html')) return reply.status(503).headers(PAGE_HEADERS).send(NOT_BUILT_PAGE);
    return reply.headers(PAGE_HEADERS).send(await read('index.html'));
  };

  for (const page of STUDIO_PAGES) app.get(page, { config: { auth: 'none' } }, async (_request, reply) => sendPage(reply));

  app.get<{ Params: { '*': string } }>('/assets/*', { config: { auth: 'none' } }, async (request, reply) => {
    const file = `assets/${request.params['*']}`;
    if (!files.has(file)) return reply.status(404).send({ error: { code: 'not_found', message: `No studio file "${file}".` } });
    // Vite puts a content hash in every asset name, so a file never changes under its name.
    return reply
      .headers({
        'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
      })
      .send(await read(file));
  });
}
