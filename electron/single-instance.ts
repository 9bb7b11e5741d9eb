// One desktop app per user: a second launch hands over to the first (which shows its window)
// and quits, instead of failing on the data folder's lock. Headless `--serve` never takes this
// lock, so a hosted server and the desktop app can run side by side with different data folders.
import { app } from 'electron';

/** False when another instance runs: it has been told to show itself, and this one should quit. */
export function claimSingleInstance(showExistingWindow: () => void): boolean {
  if (!app.requestSingleInstanceLock()) return false;
  app.on('second-instance', showExistingWindow);
  return true;
}
