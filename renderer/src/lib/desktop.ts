// The Electron preload's bridge, when the studio runs in the desktop app; absent in a browser.
import type { DesktopBridge } from '../../../electron/contract.ts';

declare global {
  interface Window {
    voxflowDesktop?: DesktopBridge;
  }
}

export const desktop: DesktopBridge | null = typeof window !== 'undefined' ? (window.voxflowDesktop ?? null) : null;
