// Installs the application menu from menuTemplate(); its studio commands go to the focused
// window (or the studio's main window) on the 'menu:command' channel of the contract.
import { BrowserWindow, Menu } from 'electron';
import { DESKTOP_MENU_CHANNEL } from './contract.ts';
import { menuTemplate } from './menu-template.ts';
import { isAppUrl } from './navigation.ts';

export function installMenu(appOrigin: string, development: boolean, studioWindow: () => BrowserWindow | null): void {
  const template = menuTemplate({
    platform: process.platform,
    development,
    sendCommand(command) {
      const contents = (BrowserWindow.getFocusedWindow() ?? studioWindow())?.webContents;
      // Commands carry no data, but they are still only for the studio.
      if (contents && isAppUrl(contents.getURL(), appOrigin)) contents.send(DESKTOP_MENU_CHANNEL, command);
    },
  });
  Menu.setApplicationMenu(Menu.buildFromTemplate(template));
}
