// Where the app's windows may go. The studio lives on the embedded server's origin
// (http://127.0.0.1:<port>); nothing else may load in a window that holds the preload's bridge.
// Links to the web open in the user's browser; every other scheme (file:, javascript:, data:,
// custom protocol handlers) goes nowhere. Pure, so the rules are tested without Electron.

export type NavigationDecision = 'allow' | 'open-in-browser' | 'block';

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/** True when `url` is a page on the app's origin (scheme, host and port all equal). */
export function isAppUrl(url: string, appOrigin: string): boolean {
  const parsed = parse(url);
  // Opaque origins (data:, javascript:, about:blank) serialize as "null" and never match. A
  // blob: or filesystem: URL reports the origin inside it, but it is not a page the server
  // sent, so the scheme must be the app's own as well.
  return parsed !== null && parsed.origin === appOrigin && `${parsed.protocol}//${parsed.host}` === appOrigin;
}

/** What to do when a window is about to navigate to, or open, `url`. */
export function navigationDecision(url: string, appOrigin: string): NavigationDecision {
  if (isAppUrl(url, appOrigin)) return 'allow';
  const parsed = parse(url);
  // Only the web goes to the browser: `shell.openExternal` on any other scheme could run a
  // local program (file:, smb:, custom handlers).
  if (parsed && (parsed.protocol === 'https:' || parsed.protocol === 'http:') && parsed.hostname !== '') return 'open-in-browser';
  return 'block';
}
