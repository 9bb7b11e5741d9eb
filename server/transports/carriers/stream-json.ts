// Reading the carriers' media-stream messages without ever throwing: a socket that sends garbage
// gets a 'malformed' answer per message and the call goes on.
import type { StreamMessage } from './carrier.ts';
import { DTMF_DIGITS } from './carrier.ts';

/** A 20 ms frame is 160 bytes (216 in base64); a carrier may batch, but never this much. */
export const MAX_MEDIA_PAYLOAD_BASE64 = 64 * 1024;
/** Longer than any documented message with a maximal media payload. */
export const MAX_MESSAGE_CHARS = MAX_MEDIA_PAYLOAD_BASE64 + 4096;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export type JsonObject = Record<string, unknown>;

export function parseMessageObject(text: unknown): { ok: true; message: JsonObject; event: string } | { ok: false; malformed: StreamMessage } {
  if (typeof text !== 'string') return { ok: false, malformed: { type: 'malformed', reason: 'a media-stream message must be text' } };
  if (text.length > MAX_MESSAGE_CHARS) return { ok: false, malformed: { type: 'malformed', reason: `message of ${text.length} characters is over the ${MAX_MESSAGE_CHARS} allowed` } };
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return { ok: false, malformed: { type: 'malformed', reason: 'not JSON' } };
  }
  if (!isObject(message)) return { ok: false, malformed: { type: 'malformed', reason: 'not a JSON object' } };
  if (typeof message.event !== 'string') return { ok: false, malformed: { type: 'malformed', reason: 'no event name' } };
  return { ok: true, message, event: message.event };
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function objectAt(value: JsonObject, key: string): JsonObject | undefined {
  const found = value[key];
  return isObject(found) ? found : undefined;
}

export function stringAt(value: JsonObject | undefined, key: string): string | undefined {
  const found = value?.[key];
  return typeof found === 'string' && found.length > 0 ? found : undefined;
}

/** Carriers send numbers as JSON strings ("sequenceNumber": "3") or numbers; both are read. */
export function integerAt(value: JsonObject | undefined, key: string): number | undefined {
  const found = value?.[key];
  const number = typeof found === 'string' && /^\d{1,15}$/.test(found) ? Number(found) : found;
  return typeof number === 'number' && Number.isSafeInteger(number) && number >= 0 ? number : undefined;
}

/** Base64 media, bounded before it is decoded. */
export function decodePayload(payload: unknown): { ok: true; bytes: Uint8Array } | { ok: false; reason: string } {
  if (typeof payload !== 'string') return { ok: false, reason: 'media without a base64 payload' };
  if (payload.length > MAX_MEDIA_PAYLOAD_BASE64) return { ok: false, reason: `media payload of ${payload.length} base64 characters is over the ${MAX_MEDIA_PAYLOAD_BASE64} allowed` };
  if (payload.length % 4 !== 0 || !BASE64.test(payload)) return { ok: false, reason: 'media payload is not base64' };
  const buffer = Buffer.from(payload, 'base64');
  return { ok: true, bytes: new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength) };
}

export function dtmfMessage(dtmf: JsonObject | undefined): StreamMessage {
  const digit = stringAt(dtmf, 'digit');
  if (digit === undefined || !DTMF_DIGITS.test(digit)) return { type: 'malformed', reason: 'dtmf without a keypad digit' };
  return { type: 'dtmf', digit };
}

/** Custom parameters as an object of strings; other values are left out. */
export function stringRecord(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (Array.isArray(value)) {
    // Call Control's custom_parameters are a list of {name, value}.
    for (const item of value) if (isObject(item) && typeof item.name === 'string' && typeof item.value === 'string') out[item.name] = item.value;
  } else if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) if (typeof item === 'string') out[key] = item;
  }
  return out;
}

export function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
