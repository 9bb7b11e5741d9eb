// The session event protocol (DESIGN §4): the same JSON on WebSocket text frames and on the
// WebRTC data channel. Server events are a discriminated union; client messages are parsed
// with zod so a malformed or unknown one becomes an `error` event, never a dropped connection.
import { z } from 'zod';
import type { VariableValue } from '../flow/template.ts';

export interface TurnMetrics {
  turn: number;
  endpointing_ms: number | null;
  stt_ms: number | null;
  llm_ttft_ms: number | null;
  tts_ttfb_ms: number | null;
  voice_to_voice_ms: number | null;
  server_ms: number | null;
}

export type ServerEvent =
  | { type: 'session_started'; session_id: string; mode: 'assistant' | 'flow'; flow_id: string | null; sample_rate: number }
  | { type: 'flow_state'; state: string; prompt: string; artifact_type: string; variables: Record<string, VariableValue>; tools: string[] }
  | { type: 'artifact'; state: string; artifact_type: string; prompt: string }
  | { type: 'user_started_speaking' }
  | { type: 'user_stopped_speaking' }
  | { type: 'transcript'; role: 'user' | 'agent'; text: string; final: boolean; interrupted?: boolean }
  | {
      type: 'tool_call';
      name: string;
      arguments: unknown;
      status: 'accepted' | 'rejected';
      reason: string | null;
      from_state: string;
      to_state: string;
      /** Who made the call: the model, or the designer through simulate_tool. */
      source: 'model' | 'simulator';
    }
  | { type: 'agent_started_speaking' }
  | { type: 'agent_stopped_speaking' }
  | { type: 'interrupted' }
  | ({ type: 'metrics' } & TurnMetrics)
  | { type: 'error'; code: string; message: string; fatal: boolean }
  | { type: 'credits_exhausted'; balance_usd_cents: number }
  | { type: 'session_ended'; reason: string; duration_secs: number; credits_charged_usd_cents: number }
  | { type: 'pong' };

export type ServerEventType = ServerEvent['type'];

const MAX_TEXT = 4_000;

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
]);
export type ClientMessage = z.infer<typeof ClientMessage>;

export const CLIENT_MESSAGE_TYPES = ['text', 'interrupt', 'end', 'ping', 'simulate_tool'] as const;

export type ParsedClientMessage = { ok: true; message: ClientMessage } | { ok: false; code: 'malformed_message' | 'unknown_message'; message: string };

/** Text frames are small control messages; anything larger is refused before JSON.parse. */
export const MAX_CONTROL_MESSAGE_BYTES = 16 * 1024;

export function parseClientMessage(text: string): ParsedClientMessage {
  if (text.length > MAX_CONTROL_MESSAGE_BYTES) {
    return { ok: false, code: 'malformed_message', message: `control messages are at most ${MAX_CONTROL_MESSAGE_BYTES} bytes` };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, code: 'malformed_message', message: 'text frames must be JSON objects with a "type"' };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data) || typeof (data as { type?: unknown }).type !== 'string') {
    return { ok: false, code: 'malformed_message', message: 'text frames must be JSON objects with a "type"' };
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
