// The policy the desktop adds to the studio's responses: only its own scripts, only its own
// server on the network, no plugins or frames.
import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy, withContentSecurityPolicy } from '../../electron/csp.ts';

const APP = 'http://127.0.0.1:43125';

function directives(policy: string): Map<string, string[]> {
  return new Map(policy.split(';').map((part) => part.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]));
}

describe('the desktop content security policy', () => {
  const policy = directives(contentSecurityPolicy(APP));

  it('runs only the studio\'s own script files: no inline script, no eval, no plugins', () => {
    expect(policy.get('script-src')).toEqual(["'self'"]);
    expect(policy.get('default-src')).toEqual(["'self'"]);
    expect(policy.get('object-src')).toEqual(["'none'"]);
    expect(policy.get('base-uri')).toEqual(["'none'"]);
  });

  it('lets the studio reach its own server over HTTP and WebSocket, and nowhere else', () => {
    expect(policy.get('connect-src')).toEqual(["'self'", 'ws://127.0.0.1:43125']);
  });

  it('cannot be framed and frames nothing', () => {
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    expect(policy.get('frame-src')).toEqual(["'none'"]);
  });

  it('is added to the studio\'s responses that carry no policy, and to no one else\'s', () => {
    const bare = withContentSecurityPolicy(`${APP}/assets/app.js`, { 'Content-Type': ['text/javascript'] }, APP)!;
    expect(bare['Content-Security-Policy']).toEqual([contentSecurityPolicy(APP)]);
    expect(bare['Content-Type']).toEqual(['text/javascript']);
    expect(withContentSecurityPolicy(`${APP}/v1/flows`, undefined, APP)).toEqual({ 'Content-Security-Policy': [contentSecurityPolicy(APP)] });

    const elsewhere = { 'content-type': ['text/html'] };
    expect(withContentSecurityPolicy('https://example.com/', elsewhere, APP)).toBe(elsewhere);
  });

  it('leaves a policy the server sent alone, so the /test page\'s hashed inline script still runs', () => {
    const testPage = { 'content-security-policy': ["default-src 'none'; script-src 'sha256-abc'"], 'content-type': ['text/html'] };
    expect(withContentSecurityPolicy(`${APP}/test`, testPage, APP)).toEqual(testPage);
  });
});
