// The options of every window the app opens, from one function, so no window can be created
// without the security settings: context isolation and the sandbox on, no Node in the page, web
// security on, no <webview>. Pure (types only from Electron), so tests check every kind.
import type { BrowserWindowConstructorOptions, WebPreferences } from 'electron';

/** The studio's main window, and windows the studio opens on its own origin (window.open). */
export const WINDOW_KINDS = ['main', 'child'] as const;
export type WindowKind = (typeof WINDOW_KINDS)[number];

export interface WindowOptionsInput {
  /** Absolute path of the built preload (preload.cjs). */
  preloadPath: string;
  /** Unpackaged runs get DevTools; packaged ones do not. */
  development: boolean;
}

/** The settings that must hold in every window; tests compare each kind against these. */
export const REQUIRED_WEB_PREFERENCES = {
  contextIsolation: true,
  sandbox: true,
  nodeIntegration: false,
  nodeIntegrationInWorker: false,
  nodeIntegrationInSubFrames: false,
  webSecurity: true,
  allowRunningInsecureContent: false,
  webviewTag: false,
  experimentalFeatures: false,
  // A file dropped on the window must not replace the studio with a file:// page.
  navigateOnDragDrop: false,
} as const satisfies WebPreferences;

function webPreferences(input: WindowOptionsInput): WebPreferences {
  return {
    ...REQUIRED_WEB_PREFERENCES,
    preload: input.preloadPath,
    devTools: input.development,
    // The studio alerts nothing in a loop, but a page must never be able to trap the user in dialogs.
    safeDialogs: true,
  };
}

export function windowOptions(kind: WindowKind, input: WindowOptionsInput): BrowserWindowConstructorOptions {
  const common: BrowserWindowConstructorOptions = {
    title: 'Voxflow',
    backgroundColor: '#111318',
    webPreferences: webPreferences(input),
  };
  // The main window is shown once its first paint is ready, so it never flashes white; a child
  // window is created by Electron itself from these options and shows at once.
  if (kind === 'main') return { ...common, show: false, width: 1320, height: 860, minWidth: 960, minHeight: 600 };
  return { ...common, show: true, width: 1000, height: 720, minWidth: 640, minHeight: 480 };
}
