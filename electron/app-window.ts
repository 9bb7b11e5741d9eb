// The studio's window: the only `new BrowserWindow` in the app, built from windowOptions().
import { BrowserWindow } from 'electron';
import { windowOptions, type WindowOptionsInput } from './window-options.ts';

export function openStudioWindow(appOrigin: string, input: WindowOptionsInput): BrowserWindow {
  const window = new BrowserWindow(windowOptions('main', input));
  window.once('ready-to-show', () => window.show());
  window.loadURL(`${appOrigin}/`).catch((error: unknown) => {
    // The server is in this process, so this is rare (a crash mid-start); the window shows
    // Chromium's error page, which the menu's Reload retries.
    console.error(`Voxflow: the studio did not load: ${String(error)}`);
    window.show();
  });
  return window;
}

/** Brings a window forward: restored if minimized, focused. */
export function showWindow(window: BrowserWindow | null): void {
  if (!window) return;
  if (window.isMinimized()) window.restore();
  window.show();
  window.focus();
}
