// GET /test: the engine router's built-in WebRTC test page. One self-contained HTML file,
// read once at startup: it signs in by itself (a JWT from /auth/login, or a session token from POST
// /v1/sessions), so the route is open like /health (docs/api.md#voice-sessions). The page handles a
// password and tokens, so it gets a strict Content-Security-Policy: only its own inline script and
// style (by hash) run, and it talks to this origin alone.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { mediaBody } from '../../http/api-contract.ts';

const PAGE_FILE = new URL('./test-page.html', import.meta.url);

/** 'sha256-…' sources for every inline <script> or <style> block of the page. */
function inlineHashes(html: string, tag: 'script' | 'style'): string {
  const blocks = html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'));
  return [...blocks].map((block) => `'sha256-${createHash('sha256').update(block[1]!).digest('base64')}'`).join(' ');
}

/** `onServe` runs each time the page is sent: a caller on it will offer WebRTC next. */
export async function testPageRoute(app: FastifyInstance, onServe: () => void = () => {}): Promise<void> {
  const html = readFileSync(PAGE_FILE, 'utf8');
  const headers = {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'content-security-policy': [
      "default-src 'none'",
      `script-src ${inlineHashes(html, 'script')}`,
      `style-src ${inlineHashes(html, 'style')}`,
      "connect-src 'self'",
      'img-src data:',
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
  };
  app.get('/test', { config: { auth: 'none' }, schema: { response: { 200: mediaBody('The WebRTC test page', ['text/html']) } } }, async (_request, reply) => {
    onServe();
    return reply.headers(headers).send(html);
  });
}
