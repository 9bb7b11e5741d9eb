// Where the studio's windows may go: only the app's own origin; web links open in the browser;
// every other scheme goes nowhere.
import { describe, expect, it } from 'vitest';
import { isAppUrl, navigationDecision } from '../../electron/navigation.ts';

const APP = 'http://127.0.0.1:43125';

describe('navigation rules', () => {
  it('lets the studio move between its own pages, with paths, queries and fragments', () => {
    for (const url of [`${APP}/`, `${APP}/flow-editor`, `${APP}/flow-editor?id=abc#state`, `${APP}/sessions`, APP]) {
      expect(navigationDecision(url, APP), url).toBe('allow');
    }
  });

  it('sends other web sites, and the same host on another port or scheme, to the browser', () => {
    for (const url of ['https://example.com/docs', 'http://example.com', 'http://127.0.0.1:8787/', 'https://127.0.0.1:43125/', 'http://localhost:43125/']) {
      expect(navigationDecision(url, APP), url).toBe('open-in-browser');
    }
  });

  it('blocks local files, scripts, data and other schemes outright, never handing them to the OS', () => {
    for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'data:text/html,<script>alert(1)</script>', 'about:blank', 'smb://server/share', 'vscode://open?x', 'mailto:a@example.com', 'not a url', '']) {
      expect(navigationDecision(url, APP), url).toBe('block');
    }
  });

  it('does not mistake look-alike URLs for the app', () => {
    expect(isAppUrl('http://127.0.0.1:43125@evil.example/', APP)).toBe(false);
    expect(isAppUrl('http://127.0.0.1:431250/', APP)).toBe(false);
    expect(isAppUrl('http://127.0.0.1.evil.example:43125/', APP)).toBe(false);
    expect(isAppUrl('blob:http://127.0.0.1:43125/uuid', APP)).toBe(false);
  });
});
