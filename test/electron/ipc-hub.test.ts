// The one door from the studio into the main process: only the studio's own frames, only the
// contract's channels, only well-formed arguments; the handler runs only when all three hold.
import { describe, expect, it, vi } from 'vitest';
import { DESKTOP_INVOKE_CHANNELS } from '../../electron/contract.ts';
import { IpcRequestRefused, MAX_YAML_CHARACTERS, createIpcHub, type InvokeHandlers } from '../../electron/ipc-hub.ts';

const APP = 'http://127.0.0.1:43125';
const STUDIO = `${APP}/flow-editor`;

function hubWithSpies() {
  const handlers = {
    'app:version': vi.fn(async () => '0.1.0'),
    'auth:local-sign-in': vi.fn(async () => ({ access_token: 'jwt', email: 'local@voxflow.desktop' })),
    'file:open-yaml': vi.fn(async () => null),
    'file:save-yaml': vi.fn(async (_name: string, _text: string) => true),
  } satisfies InvokeHandlers;
  return { hub: createIpcHub(APP, handlers), handlers };
}

describe('the IPC hub', () => {
  it('registers exactly the contract\'s channels', () => {
    expect(hubWithSpies().hub.channels).toEqual(DESKTOP_INVOKE_CHANNELS);
  });

  it('answers the studio with the handler\'s result, passing its arguments through', async () => {
    const { hub, handlers } = hubWithSpies();
    await expect(hub.dispatch('app:version', STUDIO, [])).resolves.toBe('0.1.0');
    await expect(hub.dispatch('auth:local-sign-in', `${APP}/`, [])).resolves.toEqual({ access_token: 'jwt', email: 'local@voxflow.desktop' });
    await expect(hub.dispatch('file:save-yaml', STUDIO, ['Guessing game.yaml', 'id: game\n'])).resolves.toBe(true);
    expect(handlers['file:save-yaml']).toHaveBeenCalledWith('Guessing game.yaml', 'id: game\n');
  });

  it('refuses a request from any other origin, or from a frame that is gone, without running the handler', async () => {
    const { hub, handlers } = hubWithSpies();
    for (const sender of ['https://evil.example/', 'http://127.0.0.1:8787/', 'file:///tmp/x.html', 'data:text/html,hi', null, undefined]) {
      await expect(hub.dispatch('auth:local-sign-in', sender, []), String(sender)).rejects.toThrow(/did not come from the studio's origin/);
    }
    expect(handlers['auth:local-sign-in']).not.toHaveBeenCalled();
  });

  it('refuses a channel that is not in the contract, naming it', async () => {
    const { hub } = hubWithSpies();
    await expect(hub.dispatch('shell:open-external', STUDIO, ['https://example.com'])).rejects.toThrow(IpcRequestRefused);
    await expect(hub.dispatch('shell:open-external', STUDIO, [])).rejects.toThrow('shell:open-external: no such channel in the desktop contract');
    await expect(hub.dispatch('__proto__', STUDIO, [])).rejects.toThrow(/no such channel/);
  });

  it('refuses wrong arguments with a message that says what was wrong', async () => {
    const { hub, handlers } = hubWithSpies();
    await expect(hub.dispatch('file:save-yaml', STUDIO, ['flow.yaml'])).rejects.toThrow('file:save-yaml: takes 2 arguments (suggestedName, text), got 1');
    await expect(hub.dispatch('file:save-yaml', STUDIO, ['flow.yaml', 42])).rejects.toThrow('file:save-yaml: text must be text');
    await expect(hub.dispatch('file:save-yaml', STUDIO, ['', 'id: x'])).rejects.toThrow('suggestedName must not be empty');
    await expect(hub.dispatch('file:save-yaml', STUDIO, ['flow.yaml', 'x'.repeat(MAX_YAML_CHARACTERS + 1)])).rejects.toThrow(/text must be at most/);
    await expect(hub.dispatch('app:version', STUDIO, ['extra'])).rejects.toThrow('app:version: takes no arguments, got 1');
    expect(handlers['file:save-yaml']).not.toHaveBeenCalled();
    expect(handlers['app:version']).not.toHaveBeenCalled();
  });

  it('passes a handler\'s own failure through to the studio', async () => {
    const { hub, handlers } = hubWithSpies();
    handlers['auth:local-sign-in'].mockRejectedValueOnce(new Error('the data folder is full'));
    await expect(hub.dispatch('auth:local-sign-in', STUDIO, [])).rejects.toThrow('the data folder is full');
  });
});
