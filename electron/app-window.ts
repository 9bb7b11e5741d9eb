// The studio's window: the only `new BrowserWindow` in the app, built from windowOptions().
import { BrowserWindow, dialog } from 'electron';
import { windowOptions, type WindowOptionsInput } from './window-options.ts';

export function openStudioWindow(appOrigin: string, input: WindowOptionsInput): BrowserWindow {
  const window = new BrowserWindow(windowOptions('main', input));
  window.once('ready-to-show', () => window.show());
  // The studio's beforeunload guard (unsaved changes) would cancel a close silently; ask instead.
  window.webContents.on('will-prevent-unload', (event) => {
    const choice = dialog.showMessageBoxSync(window, {
      type: 'question',
      buttons: ['Close without saving', 'Keep editing'],
      defaultId: 1,
      cancelId: 1,
      title: 'Unsaved changes',
      message: 'This flow has changes that are not saved.',
      detail: 'Close anyway and lose them?',
    });
    // preventDefault here overrides the page's beforeunload: the window closes.
    if (choice === 0) event.preventDefault();
  });
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
