// The Content-Security-Policy the desktop guarantees on every response from the app's origin. The
// studio is a built bundle served by the embedded server: scripts only from that origin (no
// inline script, no eval), network only to that origin (HTTP and its WebSocket), no plugins, no
// framing. Styles allow inline because Svelte Flow and CodeMirror set style attributes and
// inject <style> elements at run time. Pure, so the policy is tested without Electron.
import { isAppUrl } from './navigation.ts';

export function contentSecurityPolicy(appOrigin: string): string {
  const { host } = new URL(appOrigin);
  // 'self' covers ws: on the same host in CSP3 browsers; said outright in case one does not.
  const websocket = `ws://${host}`;
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self' ${websocket}`,
    "media-src 'self' blob: mediastream:",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "frame-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}

export type ResponseHeaders = Record<string, string | string[]>;

/**
 * The response headers with the desktop's policy added to a response from the app's origin that
 * carries none; other responses are returned as they are. The server sets its own, stricter
 * policies on the studio's pages and on the /test page (whose inline script it allows by hash):
 * adding a second policy would intersect with them and block that page, so theirs stand alone.
 */
export function withContentSecurityPolicy(url: string, headers: ResponseHeaders | undefined, appOrigin: string): ResponseHeaders | undefined {
  if (!isAppUrl(url, appOrigin)) return headers;
  if (headers && Object.keys(headers).some((key) => key.toLowerCase() === 'content-security-policy')) return headers;
  return { ...headers, 'Content-Security-Policy': [contentSecurityPolicy(appOrigin)] };
}
