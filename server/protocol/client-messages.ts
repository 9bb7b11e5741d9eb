// Client-to-server control messages of a voice session (docs/api.md#voice-sessions). The zod schema
// is the one source: the types and the list of known message types are derived from it. A malformed
// or unknown message becomes an `error` event, never a dropped connection.
import { z } from 'zod';

const MAX_TEXT = 4_000;

/** Keys a client presses for the caller, as a phone keypad has them; a run of up to 32 at once (a flow test's dtmf step takes the same). */
export const CLIENT_DTMF_PATTERN = /^[0-9*#]{1,32}$/;

export const ClientMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string().trim().min(1, 'text must not be empty').max(MAX_TEXT, `text is at most ${MAX_TEXT} characters`) }),
  z.object({ type: z.literal('interrupt') }),
  z.object({ type: z.literal('end') }),
  z.object({ type: z.literal('ping') }),
  z.object({
    type: z.literal('simulate_tool'),
    name: z.string().min(1).max(64),
    arguments: z.record(z.string(), z.unknown()).optional(),
  }),
  // The caller's keypad: WebSocket, WebRTC and studio clients press keys as a phone caller does.
  z.object({ type: z.literal('dtmf'), digits: z.string().regex(CLIENT_DTMF_PATTERN, 'digits are 1 to 32 of 0-9, * and #') }),
]);
export type ClientMessage = z.infer<typeof ClientMessage>;
export type ClientMessageType = ClientMessage['type'];

export const CLIENT_MESSAGE_TYPES: readonly ClientMessageType[] = ClientMessage.options.map((option) => option.shape.type.value);

export type ParsedClientMessage = { ok: true; message: ClientMessage } | { ok: false; code: 'malformed_message' | 'unknown_message'; message: string };

/** Text frames are small control messages; anything larger is refused before JSON.parse. */
export const MAX_CONTROL_MESSAGE_BYTES = 16 * 1024;

const NOT_AN_OBJECT = 'text frames must be JSON objects with a "type"';

export function parseClientMessage(text: string): ParsedClientMessage {
  if (text.length > MAX_CONTROL_MESSAGE_BYTES) {
    return { ok: false, code: 'malformed_message', message: `control messages are at most ${MAX_CONTROL_MESSAGE_BYTES} bytes` };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, code: 'malformed_message', message: NOT_AN_OBJECT };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data) || typeof (data as { type?: unknown }).type !== 'string') {
    return { ok: false, code: 'malformed_message', message: NOT_AN_OBJECT };
  }
  const type = (data as { type: string }).type;
  if (!(CLIENT_MESSAGE_TYPES as readonly string[]).includes(type)) {
    return { ok: false, code: 'unknown_message', message: `unknown message type "${type.slice(0, 40)}"; known: ${CLIENT_MESSAGE_TYPES.join(', ')}` };
  }
  const parsed = ClientMessage.safeParse(data);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.') || type}: ${i.message}`).join('; ');
    return { ok: false, code: 'malformed_message', message: `bad "${type}" message: ${detail}` };
  }
  return { ok: true, message: parsed.data };
}
