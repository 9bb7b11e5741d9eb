// Connects the IPC hub to Electron: one ipcMain.handle per contract channel, each passing the
// sender frame's URL and the raw arguments to the hub, which checks them before any handler runs.
import { writeFile } from 'node:fs/promises';
import { BrowserWindow, app, dialog, ipcMain, type OpenDialogOptions, type SaveDialogOptions } from 'electron';
import { createIpcHub } from './ipc-hub.ts';
import type { LocalSignIn } from './local-account.ts';
import { readYamlFile, suggestedYamlFileName } from './yaml-files.ts';

const YAML_FILTERS = [
  { name: 'YAML flows', extensions: ['yaml', 'yml'] },
  { name: 'All files', extensions: ['*'] },
];
/** Opening also takes a Pipecat Flows FlowConfig, which is often JSON (the import tells it by its shape). */
const OPEN_FILTERS = [
  { name: 'Flows (Voxflow YAML, Pipecat FlowConfig)', extensions: ['yaml', 'yml', 'json'] },
  { name: 'All files', extensions: ['*'] },
];

export interface DesktopIpcOptions {
  appOrigin: string;
  localSignIn(): Promise<LocalSignIn>;
  /** Where the open dialog starts the first time: the example flows that ship with the app. */
  examplesFolder: string;
}

export function registerDesktopIpc({ appOrigin, localSignIn, examplesFolder }: DesktopIpcOptions): void {
  // The first open starts among the example flows that ship with the app; later ones where the
  // user last was, which the OS dialog remembers by itself.
  let openFolder: string | undefined = examplesFolder;
  const hub = createIpcHub(appOrigin, {
    'app:version': async () => app.getVersion(),
    'auth:local-sign-in': localSignIn,
    'file:open-yaml': async () => {
      const options: OpenDialogOptions = { title: 'Open a flow', properties: ['openFile'], filters: OPEN_FILTERS, defaultPath: openFolder };
      openFolder = undefined;
      const parent = BrowserWindow.getFocusedWindow();
      const chosen = parent ? await dialog.showOpenDialog(parent, options) : await dialog.showOpenDialog(options);
      const path = chosen.filePaths[0];
      return chosen.canceled || !path ? null : readYamlFile(path);
    },
    'file:save-yaml': async (suggestedName, text) => {
      const options: SaveDialogOptions = { title: 'Save the flow as YAML', defaultPath: suggestedYamlFileName(suggestedName), filters: YAML_FILTERS };
      const parent = BrowserWindow.getFocusedWindow();
      const chosen = parent ? await dialog.showSaveDialog(parent, options) : await dialog.showSaveDialog(options);
      if (chosen.canceled || !chosen.filePath) return false;
      await writeFile(chosen.filePath, text, 'utf8');
      return true;
    },
  });
  for (const channel of hub.channels) {
    ipcMain.handle(channel, (event, ...args: unknown[]) => hub.dispatch(channel, event.senderFrame?.url, args));
  }
}
