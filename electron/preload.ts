// The preload: runs sandboxed, isolated from the page, and exposes exactly the contract's
// DesktopBridge as `window.voxflowDesktop`. The page never sees ipcRenderer, IPC event objects
// (they carry the sender) or any channel outside the contract. Bundled to CommonJS, the only
// module format a sandboxed preload can load.
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import {
  DESKTOP_MENU_CHANNEL,
  DESKTOP_MENU_COMMANDS,
  type DesktopBridge,
  type DesktopInvokeChannels,
  type DesktopMenuCommand,
} from './contract.ts';

function invoke<C extends keyof DesktopInvokeChannels>(channel: C, ...args: DesktopInvokeChannels[C]['args']): Promise<DesktopInvokeChannels[C]['result']> {
  return ipcRenderer.invoke(channel, ...args) as Promise<DesktopInvokeChannels[C]['result']>;
}

function isMenuCommand(value: unknown): value is DesktopMenuCommand {
  return typeof value === 'string' && (DESKTOP_MENU_COMMANDS as readonly string[]).includes(value);
}

const bridge: DesktopBridge = {
  version: () => invoke('app:version'),
  localSignIn: () => invoke('auth:local-sign-in'),
  openYamlFile: () => invoke('file:open-yaml'),
  saveYamlFile: (suggestedName, text) => invoke('file:save-yaml', suggestedName, text),
  onMenuCommand(listener) {
    const forward = (_event: IpcRendererEvent, command: unknown) => {
      if (isMenuCommand(command)) listener(command);
    };
    ipcRenderer.on(DESKTOP_MENU_CHANNEL, forward);
    return () => {
      ipcRenderer.removeListener(DESKTOP_MENU_CHANNEL, forward);
    };
  },
};

contextBridge.exposeInMainWorld('voxflowDesktop', bridge);
