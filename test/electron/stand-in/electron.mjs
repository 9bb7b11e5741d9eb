// A stand-in for Electron's main-process module, for running the built main bundle under plain
// Node (there is no Electron binary here). It carries only what the `--serve` path touches;
// the desktop path's modules are exported as empty objects so the bundle's imports link.
import { EventEmitter } from 'node:events';

export const app = Object.assign(new EventEmitter(), {
  isPackaged: false,
  commandLine: {
    appendSwitch(name, value) {
      process.stdout.write(`[stand-in] chromium switch --${name}${value ? `=${value}` : ''}\n`);
    },
  },
  whenReady: () => Promise.resolve(),
  dock: undefined,
  exit(code) {
    process.stdout.write(`[stand-in] app.exit(${code})\n`);
    process.exit(code);
  },
});

export const BrowserWindow = class {};
export const Menu = {};
export const dialog = {};
export const ipcMain = {};
export const session = {};
export const shell = {};
