// Quitting waits for the embedded server to close: live sessions end and are recorded, the
// store writes its snapshot and releases the data dir's lock. Electron's `will-quit` (after every
// window has closed) cannot wait on a promise, so the first quit is held back (preventDefault),
// the server closes, and the app quits again; that second pass goes through. Pure: the adapter passes Electron's event and
// `app.quit`.

export interface QuitGuardOptions {
  closeServer(): Promise<void>;
  /** Asks the app to quit again once the server is closed (app.quit). */
  quit(): void;
  /** A close that failed or hung is reported, and the app quits anyway. */
  onCloseError(error: unknown): void;
  /** How long closing may take before the app quits regardless. */
  timeoutMs: number;
}

export type BeforeQuitHandler = (event: { preventDefault(): void }) => void;

export function createQuitGuard(options: QuitGuardOptions): BeforeQuitHandler {
  let state: 'running' | 'closing' | 'closed' = 'running';
  return (event) => {
    if (state === 'closed') return;
    event.preventDefault();
    if (state === 'closing') return;
    state = 'closing';
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the server did not close within ${options.timeoutMs} ms`)), options.timeoutMs);
    });
    Promise.race([options.closeServer(), timeout])
      .catch((error: unknown) => options.onCloseError(error))
      .finally(() => {
        clearTimeout(timer);
        state = 'closed';
        options.quit();
      });
  };
}
