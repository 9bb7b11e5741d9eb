// The native menu: the studio's commands with their usual shortcuts, the editing roles macOS
// needs, reload, and DevTools only in development.
import type { MenuItemConstructorOptions } from 'electron';
import { describe, expect, it } from 'vitest';
import { DESKTOP_MENU_COMMANDS, type DesktopMenuCommand } from '../../electron/contract.ts';
import { menuTemplate } from '../../electron/menu-template.ts';

function flatten(items: MenuItemConstructorOptions[]): MenuItemConstructorOptions[] {
  return items.flatMap((item) => [item, ...(Array.isArray(item.submenu) ? flatten(item.submenu) : [])]);
}

/** Clicks every item with a click handler and records which command each one sent. */
function commandsByAccelerator(platform: NodeJS.Platform): Map<DesktopMenuCommand, string | undefined> {
  const sent: DesktopMenuCommand[] = [];
  const items = flatten(menuTemplate({ platform, development: false, sendCommand: (command) => sent.push(command) }));
  const result = new Map<DesktopMenuCommand, string | undefined>();
  for (const item of items) {
    if (!item.click) continue;
    const before = sent.length;
    (item.click as () => void)();
    expect(sent.length, item.label).toBe(before + 1);
    result.set(sent.at(-1)!, typeof item.accelerator === 'string' ? item.accelerator : undefined);
  }
  return result;
}

describe('the native menu', () => {
  it('sends every studio command from a menu item with its usual shortcut', () => {
    const commands = commandsByAccelerator('linux');
    expect([...commands.keys()].sort()).toEqual([...DESKTOP_MENU_COMMANDS].sort());
    expect(commands.get('new-flow')).toBe('CmdOrCtrl+N');
    expect(commands.get('open-yaml')).toBe('CmdOrCtrl+O');
    expect(commands.get('save-flow')).toBe('CmdOrCtrl+S');
    expect(commands.get('save-yaml')).toBe('CmdOrCtrl+Shift+S');
    expect(commands.get('undo')).toBe('CmdOrCtrl+Z');
    expect(commands.get('redo')).toBe('Shift+CmdOrCtrl+Z');
    expect(commandsByAccelerator('win32').get('redo')).toBe('Ctrl+Y');
  });

  it('keeps cut, copy, paste and select-all native, and offers reload', () => {
    const roles = flatten(menuTemplate({ platform: 'darwin', development: false, sendCommand: () => {} })).map((item) => item.role);
    expect(roles).toEqual(expect.arrayContaining(['cut', 'copy', 'paste', 'selectAll', 'reload', 'appMenu']));
  });

  it('offers DevTools only in development', () => {
    const roles = (development: boolean) => flatten(menuTemplate({ platform: 'linux', development, sendCommand: () => {} })).map((item) => item.role);
    expect(roles(true)).toContain('toggleDevTools');
    expect(roles(false)).not.toContain('toggleDevTools');
  });

  it('quits from the File menu on Windows and Linux, and leaves quitting to the app menu on macOS', () => {
    const roles = (platform: NodeJS.Platform) => flatten(menuTemplate({ platform, development: false, sendCommand: () => {} })).map((item) => item.role);
    expect(roles('linux')).toContain('quit');
    expect(roles('linux')).not.toContain('appMenu');
    expect(roles('darwin')).not.toContain('quit');
  });
});
