// DNS rebinding and cross-site requests (docs/hosting.md#running-headless). A page on evil.example
// can point its own name at 127.0.0.1 and then talk to a server on loopback as "same origin": the
// Host header is all that tells it apart, so a loopback-bound server answers only to loopback
// names, the public URL's host and --allowed-hosts. And a browser page of another origin may not
// change anything or open a voice socket (WebSocket upgrades have no CORS preflight) unless its
// Origin is this server's own, the public URL's or in --allowed-origins. Requests without an Origin
// (backends, curl) are not browsers and pass. The one door open to any origin is the one the spec
// hands to browsers: a session token (the `ws_url`, ?session_token=, and a live peer's PATCH
// /offer), where the unguessable token is the credential.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.ts';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return LOOPBACK_HOSTS.has(name) || name.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(name);
}

/** The host name of a Host header (without port; IPv6 keeps its brackets). */
function hostnameOf(host: string): string {
  return host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
}

function originHost(origin: string): string | null {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return null;
  }
}

/** Routes a browser of any origin may use: the ones a session token authenticates. */
function opensToAnyOrigin(request: FastifyRequest): boolean {
  const path = request.url.split('?', 1)[0]!;
  if (path.startsWith('/v1/ws/')) return true;
  if (request.method === 'PATCH' && (path === '/offer' || path.startsWith('/offer/'))) return true;
  // ?session_token= is a credential only on the engine router's routes; elsewhere it is ignored,
  // so it must not open any other route to foreign pages (a signup with ?session_token=x would).
  if (path !== '/ws' && path !== '/offer') return false;
  const query = request.query as Record<string, unknown> | undefined;
  return typeof query?.session_token === 'string';
}

export const hostAndOriginPlugin = fp(
  async (app: FastifyInstance) => {
    const { config } = app.services;
    const loopbackBound = isLoopbackName(config.host);
    const publicHost = config.publicUrl ? new URL(config.publicUrl).host.toLowerCase() : null;
    const allowedHosts = new Set(config.allowedHosts.map((h) => h.toLowerCase()));
    if (publicHost) allowedHosts.add(hostnameOf(publicHost));
    const anyOrigin = config.allowedOrigins.includes('*');
    const allowedOrigins = new Set(config.allowedOrigins.map((o) => originHost(o)).filter((h): h is string => h !== null));
    if (publicHost) allowedOrigins.add(publicHost);

    // Synchronous (a callback, not async), like every hook every request passes: an async hook
    // costs each request a promise and a turn of the microtask queue for work that never waits.
    // The last Host header found allowed: nearly every request repeats it, and its check is a few
    // regular expressions.
    let allowedHost: string | null = null;
    app.addHook('onRequest', (request, _reply, done) => {
      try {
        checkHostAndOrigin(request);
      } catch (error) {
        return done(error as Error);
      }
      done();
    });
    function checkHostAndOrigin(request: FastifyRequest): void {
      const host = (request.headers.host ?? '').toLowerCase();
      if (loopbackBound && host !== allowedHost) {
        if (!isLoopbackName(hostnameOf(host)) && !allowedHosts.has(hostnameOf(host))) {
          throw new AppError('host_not_allowed', `This server answers only to loopback names; "${hostnameOf(host).slice(0, 100)}" is not one (add it to --allowed-hosts).`);
        }
        allowedHost = host;
      }
      const origin = request.headers.origin;
      if (origin === undefined || anyOrigin) return;
      const upgrade = request.headers.upgrade?.toLowerCase() === 'websocket';
      if (SAFE_METHODS.has(request.method) && !upgrade) return;
      if (opensToAnyOrigin(request)) return;
      const from = originHost(origin);
      // The studio itself (browser or desktop) is same-origin: its Origin names the Host it called.
      if (from !== null && (from === host || allowedOrigins.has(from) || (loopbackBound && isLoopbackName(hostnameOf(from))))) return;
      throw new AppError('origin_not_allowed', `Requests from ${origin.slice(0, 100)} are not allowed here; add the origin to --allowed-origins.`);
    }
  },
  { name: 'voxflow-host-and-origin', dependencies: ['voxflow-services'] },
);
