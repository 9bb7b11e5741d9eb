// `voxflow --serve` in the packaged app: the headless command of `npm run serve` (same flags,
// same environment, same output and exit codes), with Electron standing in for the process: no
// window, no dock icon, and Electron's own quit requests closing the server like a signal does.
import { app } from 'electron';
import { serveFromCommandLine } from '../server/serve.ts';

export async function runServeMode(serverArgv: readonly string[]): Promise<void> {
  void app.whenReady().then(() => app.dock?.hide());
  const running = await serveFromCommandLine(serverArgv, process.env, {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    // app.exit skips before-quit: the command has already closed the server when it exits.
    exit: (code) => app.exit(code),
    signals: process,
  });
  if (!running) return;
  // Electron turns some shutdown requests into app.quit() (SIGTERM handled natively, logout,
  // Cmd-Q on macOS): those close the server gracefully too, then exit through the command.
  app.on('before-quit', (event) => {
    event.preventDefault();
    running.stop('quit');
  });
}
