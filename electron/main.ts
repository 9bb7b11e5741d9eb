// The Electron main process: a short chain. `--serve` runs the headless server and nothing
// else; otherwise: one instance, the embedded server on loopback, security rules on the
// session and on every web contents, the IPC hub, the menu, the studio window, and a quit that
// waits for the store to flush.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, dialog, session, type BrowserWindow } from 'electron';
import { SHUTDOWN_GRACE_MS } from '../server/serve.ts';
import { headlessChromiumSwitches, parseLaunchArguments, refusedDebugSwitches } from './args.ts';
import { openStudioWindow, showWindow } from './app-window.ts';
import { registerDesktopIpc } from './desktop-ipc.ts';
import { createLocalSignIn } from './local-account.ts';
import { installMenu } from './native-menu.ts';
import { createQuitGuard } from './quit-guard.ts';
import { runServeMode } from './serve-mode.ts';
import { startEmbeddedServer } from './server-host.ts';
import { guardAllWebContents, secureSession } from './session-security.ts';
import { claimSingleInstance } from './single-instance.ts';
import { windowOptions, type WindowOptionsInput } from './window-options.ts';

const APP_NAME = 'Voxflow';
// The same as appId in electron-builder.yml: Windows groups the taskbar and notifications by it.
const APP_ID = 'dev.voxflow.studio';

async function runDesktop(): Promise<void> {
  // One user-data folder whether run packaged (productName) or as `electron .` (package name).
  app.setPath('userData', join(app.getPath('appData'), APP_NAME));
  if (process.platform === 'win32') app.setAppUserModelId(APP_ID);
  let studio: BrowserWindow | null = null;
  if (!claimSingleInstance(() => showWindow(studio))) {
    app.quit();
    return;
  }
  await app.whenReady();

  let server;
  try {
    server = await startEmbeddedServer(app.getPath('userData'), process.env);
  } catch (error) {
    // StoreLockedError says which process holds the data folder and which lock file to check.
    dialog.showErrorBox('Voxflow could not start', error instanceof Error ? error.message : String(error));
    app.exit(1);
    return;
  }
  const { origin } = server;
  // On will-quit, not before-quit: the windows have closed by then, each having had its say
  // about unsaved changes, so a designer who chooses to stay never finds the server shut.
  app.on(
    'will-quit',
    createQuitGuard({
      closeServer: server.close,
      quit: () => app.quit(),
      onCloseError: (error) => console.error(`Voxflow: closing the server failed: ${String(error)}`),
      timeoutMs: SHUTDOWN_GRACE_MS,
    }),
  );

  const windows: WindowOptionsInput = {
    preloadPath: fileURLToPath(new URL('./preload.cjs', import.meta.url)),
    development: !app.isPackaged,
  };
  secureSession(session.defaultSession, origin);
  guardAllWebContents(origin, windowOptions('child', windows));
  registerDesktopIpc({
    appOrigin: origin,
    localSignIn: createLocalSignIn(server.app.services, server.config.dataDir),
    examplesFolder: app.isPackaged ? join(process.resourcesPath, 'flows') : fileURLToPath(new URL('../../resources/flows', import.meta.url)),
  });
  installMenu(origin, windows.development, () => studio);

  const openStudio = () => {
    studio = openStudioWindow(origin, windows);
    studio.on('closed', () => (studio = null));
  };
  openStudio();
  // macOS keeps the app (and its server) running with no window; the dock icon reopens one.
  app.on('activate', () => (studio ? showWindow(studio) : openStudio()));
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
}

function startupFailed(error: unknown): void {
  console.error(`Voxflow could not start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  app.exit(1);
}

// No top-level await: Electron emits `ready` only once this module has finished evaluating, so
// awaiting anything that waits for `ready` here would hang. What must happen before `ready`
// (switches, the user-data path, the single-instance lock) runs synchronously in these calls.
const debugSwitches = refusedDebugSwitches(process.argv, { packaged: app.isPackaged });
if (debugSwitches.length > 0) {
  process.stderr.write(`Voxflow does not start with debugging switches: ${debugSwitches.join(' ')}\n`);
  app.exit(2);
}
const launch = parseLaunchArguments(process.argv, { defaultApp: Boolean(process.defaultApp) });
if (launch.kind === 'serve') {
  for (const [name, value] of headlessChromiumSwitches(process.argv, process.env, process.platform)) app.commandLine.appendSwitch(name, value);
  runServeMode(launch.serverArgv).catch(startupFailed);
} else {
  runDesktop().catch(startupFailed);
}
