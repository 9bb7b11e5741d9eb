// The one place requests from the studio enter the main process. Every invoke goes through
// `dispatch`, which checks who sent it (a frame on the app's origin), that the channel is in the
// contract, and the arguments' shapes, before the handler runs. Pure: the Electron adapter
// (desktop-ipc.ts) passes it the sender frame's URL and the raw arguments.
import { z } from 'zod';
import { DESKTOP_INVOKE_CHANNELS, type DesktopInvokeChannels } from './contract.ts';
import { isAppUrl } from './navigation.ts';

export type DesktopInvokeChannel = keyof DesktopInvokeChannels;

export type InvokeHandlers = {
  [C in DesktopInvokeChannel]: (...args: DesktopInvokeChannels[C]['args']) => Promise<DesktopInvokeChannels[C]['result']>;
};

/** The largest YAML text that crosses the bridge either way; flows themselves stop at 256 KiB. */
export const MAX_YAML_CHARACTERS = 1024 * 1024;

interface ChannelArguments<C extends DesktopInvokeChannel> {
  /** Argument names, for messages; their count is the count the channel takes. */
  names: string[];
  schema: z.ZodType<DesktopInvokeChannels[C]['args']>;
}

const text = (what: string) => z.string({ error: `${what} must be text` });

const CHANNEL_ARGUMENTS: { [C in DesktopInvokeChannel]: ChannelArguments<C> } = {
  'app:version': { names: [], schema: z.tuple([]) },
  'auth:local-sign-in': { names: [], schema: z.tuple([]) },
  'file:open-yaml': { names: [], schema: z.tuple([]) },
  'file:save-yaml': {
    names: ['suggestedName', 'text'],
    schema: z.tuple([
      text('suggestedName').min(1, 'suggestedName must not be empty').max(255, 'suggestedName must be at most 255 characters'),
      text('text').max(MAX_YAML_CHARACTERS, `text must be at most ${MAX_YAML_CHARACTERS} characters`),
    ]),
  },
};

/** A request the hub refused; the message reaches the studio's rejected promise. */
export class IpcRequestRefused extends Error {
  override name = 'IpcRequestRefused';
}

export function isDesktopInvokeChannel(channel: string): channel is DesktopInvokeChannel {
  return (DESKTOP_INVOKE_CHANNELS as readonly string[]).includes(channel);
}

export interface IpcHub {
  /** The channels to register with ipcMain: exactly the contract's. */
  channels: readonly DesktopInvokeChannel[];
  /**
   * Runs `channel`'s handler for a request from the frame at `senderUrl` (null when the frame
   * is gone), or rejects with IpcRequestRefused saying what was wrong.
   */
  dispatch(channel: string, senderUrl: string | null | undefined, args: readonly unknown[]): Promise<unknown>;
}

export function createIpcHub(appOrigin: string, handlers: InvokeHandlers): IpcHub {
  return {
    channels: DESKTOP_INVOKE_CHANNELS,
    async dispatch(channel, senderUrl, args) {
      if (!isDesktopInvokeChannel(channel)) throw new IpcRequestRefused(`${channel}: no such channel in the desktop contract`);
      if (!senderUrl || !isAppUrl(senderUrl, appOrigin)) {
        throw new IpcRequestRefused(`${channel}: refused, the request did not come from the studio's origin (${appOrigin})`);
      }
      const valid = validArguments(channel, args);
      // The tuple was checked against this channel's schema, so it has the handler's parameter types.
      const handler = handlers[channel] as (...values: unknown[]) => Promise<unknown>;
      return handler(...valid);
    },
  };
}

function validArguments(channel: DesktopInvokeChannel, args: readonly unknown[]): unknown[] {
  const { names, schema } = CHANNEL_ARGUMENTS[channel] as ChannelArguments<DesktopInvokeChannel>;
  if (args.length !== names.length) {
    const expected = names.length === 0 ? 'no arguments' : `${names.length} argument${names.length === 1 ? '' : 's'} (${names.join(', ')})`;
    throw new IpcRequestRefused(`${channel}: takes ${expected}, got ${args.length}`);
  }
  const parsed = schema.safeParse(args);
  if (!parsed.success) throw new IpcRequestRefused(`${channel}: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`);
  return parsed.data as unknown[];
}
