// Quitting waits for the embedded server to close (the store flushes), quits exactly once, and
// never hangs on a server that does not close.
import { describe, expect, it, vi } from 'vitest';
import { createQuitGuard } from '../../electron/quit-guard.ts';

function quitEvent() {
  return { preventDefault: vi.fn() };
}

describe('quitting the desktop app', () => {
  it('holds the first quit until the server has closed, then quits again and lets that through', async () => {
    let finishClosing!: () => void;
    const closeServer = vi.fn(() => new Promise<void>((resolve) => (finishClosing = resolve)));
    const quit = vi.fn();
    const onBeforeQuit = createQuitGuard({ closeServer, quit, onCloseError: vi.fn(), timeoutMs: 5_000 });

    const first = quitEvent();
    onBeforeQuit(first);
    expect(first.preventDefault).toHaveBeenCalled();
    expect(closeServer).toHaveBeenCalledTimes(1);
    await Promise.resolve();
    expect(quit).not.toHaveBeenCalled();

    // Cmd-Q pressed again while closing: still held, and the server is not closed twice.
    const impatient = quitEvent();
    onBeforeQuit(impatient);
    expect(impatient.preventDefault).toHaveBeenCalled();
    expect(closeServer).toHaveBeenCalledTimes(1);

    finishClosing();
    await vi.waitFor(() => expect(quit).toHaveBeenCalledTimes(1));
    const final = quitEvent();
    onBeforeQuit(final);
    expect(final.preventDefault).not.toHaveBeenCalled();
  });

  it('quits anyway, reporting why, when closing fails', async () => {
    const quit = vi.fn();
    const onCloseError = vi.fn();
    const onBeforeQuit = createQuitGuard({ closeServer: async () => Promise.reject(new Error('disk full')), quit, onCloseError, timeoutMs: 5_000 });
    onBeforeQuit(quitEvent());
    await vi.waitFor(() => expect(quit).toHaveBeenCalledTimes(1));
    expect(onCloseError).toHaveBeenCalledWith(expect.objectContaining({ message: 'disk full' }));
  });

  it('quits anyway when the server does not close in time', async () => {
    const quit = vi.fn();
    const onCloseError = vi.fn();
    const onBeforeQuit = createQuitGuard({ closeServer: () => new Promise<void>(() => {}), quit, onCloseError, timeoutMs: 50 });
    onBeforeQuit(quitEvent());
    await vi.waitFor(() => expect(quit).toHaveBeenCalledTimes(1));
    expect(onCloseError).toHaveBeenCalledWith(expect.objectContaining({ message: expect.stringMatching(/did not close within 50 ms/) }));
  });
});
