// The one contract between the studio (renderer) and the Electron main process. Pure types and
// constants, no imports: the renderer imports it type-only, the preload and the IPC hub use the
// channel names. A channel not listed here does not exist.

/** Invoke channels: renderer → main, answered with a promise. */
export interface DesktopInvokeChannels {
  /** The app's version (package.json). */
  'app:version': { args: []; result: string };
  /** A JWT for the desktop's local account, created on first use; no prompt. */
  'auth:local-sign-in': { args: []; result: { access_token: string; email: string } };
  /** Open a YAML file chosen in the native dialog; null when cancelled. */
  'file:open-yaml': { args: []; result: { name: string; text: string } | null };
  /** Save YAML through the native dialog, suggesting `suggestedName`; false when cancelled. */
  'file:save-yaml': { args: [suggestedName: string, text: string]; result: boolean };
}

/**
 * Menu commands: main → renderer, fired by the native menu (a click, or its shortcut when the
 * page did not handle the key itself). On macOS, text fields leave Cmd+Z and Shift+Cmd+Z to the
 * menu, so 'undo' and 'redo' also arrive while a text field has focus: the studio should undo in
 * that field then (document.execCommand('undo')), not in the flow.
 */
export type DesktopMenuCommand = 'new-flow' | 'open-yaml' | 'save-yaml' | 'save-flow' | 'undo' | 'redo';

/** What the preload exposes as `window.voxflowDesktop` (absent in a plain browser). */
export interface DesktopBridge {
  version(): Promise<string>;
  localSignIn(): Promise<{ access_token: string; email: string }>;
  openYamlFile(): Promise<{ name: string; text: string } | null>;
  saveYamlFile(suggestedName: string, text: string): Promise<boolean>;
  /** Subscribe to native menu commands; returns an unsubscribe function. */
  onMenuCommand(listener: (command: DesktopMenuCommand) => void): () => void;
}

export const DESKTOP_INVOKE_CHANNELS = ['app:version', 'auth:local-sign-in', 'file:open-yaml', 'file:save-yaml'] as const satisfies readonly (keyof DesktopInvokeChannels)[];
export const DESKTOP_MENU_CHANNEL = 'menu:command';
export const DESKTOP_MENU_COMMANDS = ['new-flow', 'open-yaml', 'save-yaml', 'save-flow', 'undo', 'redo'] as const satisfies readonly DesktopMenuCommand[];
