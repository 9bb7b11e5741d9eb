// The native menu, as a template built by a pure function (types only from Electron). Studio
// commands (new, open, save, undo, redo) are sent to the studio, which owns the document; editing
// roles (cut, copy, paste) stay native, since macOS routes those shortcuts through the menu.
import type { MenuItemConstructorOptions } from 'electron';
import type { DesktopMenuCommand } from './contract.ts';

export interface MenuTemplateInput {
  platform: NodeJS.Platform;
  /** Unpackaged runs get the DevTools item. */
  development: boolean;
  /** Delivers a command to the studio in the focused window. */
  sendCommand(command: DesktopMenuCommand): void;
}

export function menuTemplate({ platform, development, sendCommand }: MenuTemplateInput): MenuItemConstructorOptions[] {
  const mac = platform === 'darwin';
  const command = (label: string, accelerator: string, name: DesktopMenuCommand): MenuItemConstructorOptions => ({
    label,
    accelerator,
    click: () => sendCommand(name),
  });

  const file: MenuItemConstructorOptions = {
    label: '&File',
    submenu: [
      command('&New Flow', 'CmdOrCtrl+N', 'new-flow'),
      command('&Open YAML…', 'CmdOrCtrl+O', 'open-yaml'),
      { type: 'separator' },
      // Save writes the open flow's draft, never what is live; the studio's Publish makes it live
      // (docs/flows.md#drafts). Open YAML in an open flow makes the file its draft; Save YAML As
      // exports it.
      command('&Save Draft', 'CmdOrCtrl+S', 'save-flow'),
      command('Save &YAML As…', 'CmdOrCtrl+Shift+S', 'save-yaml'),
      { type: 'separator' },
      mac ? { role: 'close' } : { role: 'quit' },
    ],
  };
  const edit: MenuItemConstructorOptions = {
    label: '&Edit',
    submenu: [
      // The studio undoes its own document edits (graph and YAML). A shortcut the page handles
      // itself (the YAML editor, the studio's own keys) never reaches the menu; see the contract
      // for macOS text fields.
      command('&Undo', 'CmdOrCtrl+Z', 'undo'),
      command('&Redo', platform === 'win32' ? 'Ctrl+Y' : 'Shift+CmdOrCtrl+Z', 'redo'),
      { type: 'separator' },
      { role: 'cut' },
      { role: 'copy' },
      { role: 'paste' },
      { role: 'selectAll' },
    ],
  };
  const view: MenuItemConstructorOptions = {
    label: '&View',
    submenu: [
      { role: 'reload' },
      { role: 'forceReload' },
      ...(development ? [{ role: 'toggleDevTools' } as const] : []),
      { type: 'separator' },
      { role: 'resetZoom' },
      { role: 'zoomIn' },
      { role: 'zoomOut' },
      { type: 'separator' },
      { role: 'togglefullscreen' },
    ],
  };
  return [...(mac ? [{ role: 'appMenu' } as const] : []), file, edit, view, { role: 'windowMenu' }];
}
