// Every window the app can open keeps the security settings: isolated, sandboxed, no Node in
// the page, web security on, no <webview>, and the preload that carries the bridge.
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REQUIRED_WEB_PREFERENCES, WINDOW_KINDS, windowOptions } from '../../electron/window-options.ts';

const PRELOAD = '/opt/Voxflow/resources/app.asar/dist/electron/preload.cjs';
const ELECTRON_DIR = new URL('../../electron/', import.meta.url);

describe('window options', () => {
  for (const kind of WINDOW_KINDS) {
    for (const development of [false, true]) {
      it(`keep the security settings in a ${kind} window (${development ? 'development' : 'packaged'})`, () => {
        const prefs = windowOptions(kind, { preloadPath: PRELOAD, development }).webPreferences!;
        expect(prefs.contextIsolation).toBe(true);
        expect(prefs.sandbox).toBe(true);
        expect(prefs.nodeIntegration).toBe(false);
        expect(prefs.nodeIntegrationInWorker).toBe(false);
        expect(prefs.nodeIntegrationInSubFrames).toBe(false);
        expect(prefs.webSecurity).toBe(true);
        expect(prefs.allowRunningInsecureContent).toBe(false);
        expect(prefs.webviewTag).toBe(false);
        expect(prefs.navigateOnDragDrop).toBe(false);
        expect(prefs.preload).toBe(PRELOAD);
        expect(prefs).toMatchObject(REQUIRED_WEB_PREFERENCES);
      });
    }
  }

  it('offer DevTools only when unpackaged', () => {
    for (const kind of WINDOW_KINDS) {
      expect(windowOptions(kind, { preloadPath: PRELOAD, development: false }).webPreferences!.devTools).toBe(false);
      expect(windowOptions(kind, { preloadPath: PRELOAD, development: true }).webPreferences!.devTools).toBe(true);
    }
  });

  it('are the only source of windows: every BrowserWindow and window.open in electron/ goes through windowOptions()', () => {
    const sources = readdirSync(ELECTRON_DIR)
      .filter((name) => name.endsWith('.ts'))
      .map((name) => ({ name, text: readFileSync(new URL(name, ELECTRON_DIR), 'utf8') }));
    const constructions = sources.flatMap(({ name, text }) => [...text.matchAll(/new BrowserWindow\(([^)]*)\)/g)].map((match) => ({ name, args: match[1]! })));
    expect(constructions.length).toBeGreaterThan(0);
    for (const { name, args } of constructions) expect(args, name).toMatch(/^windowOptions\(/);
    // Windows the studio opens get options handed in from windowOptions('child', …) by main.ts.
    const overrides = sources.flatMap(({ name, text }) => [...text.matchAll(/overrideBrowserWindowOptions:\s*(\w+)/g)].map((match) => ({ name, value: match[1]! })));
    expect(overrides.length).toBeGreaterThan(0);
    for (const { name, value } of overrides) expect(value, name).toBe('childWindowOptions');
    const main = sources.find(({ name }) => name === 'main.ts')!.text;
    expect(main).toMatch(/guardAllWebContents\(origin, windowOptions\('child', /);
    // Nothing else relaxes a window's preferences after the fact.
    for (const { name, text } of sources.filter(({ name }) => name !== 'window-options.ts')) expect(text, name).not.toMatch(/webPreferences/);
  });
});
