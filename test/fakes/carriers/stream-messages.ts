// Each carrier's media-stream messages, field for field as its documentation shows them: what
// the carrier sends, and a strict reading of what it accepts from us.
// Twilio: https://www.twilio.com/docs/voice/media-streams/websocket-messages
// Telnyx: https://developers.telnyx.com/docs/voice/programmable-voice/media-streaming
// Plivo:  https://www.plivo.com/docs/voice/audio-streaming/audio-streaming
import type { G711Law } from '../../../server/audio/g711.ts';
import type { CarrierName } from '../../../server/transports/carriers/carrier.ts';

export interface StartFields {
  sequence: number;
  streamId: string;
  callId: string;
  from: string;
  to: string;
  customParameters: Record<string, string>;
  encoding: G711Law;
}

export interface MediaFields {
  sequence: number;
  streamId: string;
  chunk: number;
  timestamp: number;
  payload: Uint8Array;
}

export type Outbound = { kind: 'media'; payload: Uint8Array } | { kind: 'mark'; name: string } | { kind: 'clear' } | { kind: 'error'; reason: string };

export interface CarrierMessages {
  connected(): object | null;
  start(fields: StartFields): object;
  media(fields: MediaFields): object;
  dtmf(fields: { sequence: number; streamId: string; digit: string }): object;
  markAck(fields: { sequence: number; streamId: string; name: string }): object;
  /** Plivo's answer to clearAudio. */
  cleared?(fields: { sequence: number; streamId: string }): object;
  stop(fields: { sequence: number; streamId: string; callId: string }): object | null;
  parseOutbound(text: string, streamId: string): Outbound;
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

function readJson(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function payloadOf(media: unknown): Uint8Array | null {
  const payload = (media as { payload?: unknown } | undefined)?.payload;
  if (typeof payload !== 'string' || payload.length === 0 || payload.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(payload)) return null;
  return new Uint8Array(Buffer.from(payload, 'base64'));
}

const twilio: CarrierMessages = {
  connected: () => ({ event: 'connected', protocol: 'Call', version: '1.0.0' }),
  start: (f) => ({
    event: 'start',
    sequenceNumber: String(f.sequence),
    start: {
      accountSid: 'AC00000000000000000000000000000000',
      streamSid: f.streamId,
      callSid: f.callId,
      tracks: ['inbound'],
      customParameters: f.customParameters,
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    },
    streamSid: f.streamId,
  }),
  media: (f) => ({ event: 'media', sequenceNumber: String(f.sequence), media: { track: 'inbound', chunk: String(f.chunk), timestamp: String(f.timestamp), payload: b64(f.payload) }, streamSid: f.streamId }),
  dtmf: (f) => ({ event: 'dtmf', streamSid: f.streamId, sequenceNumber: String(f.sequence), dtmf: { track: 'inbound_track', digit: f.digit } }),
  markAck: (f) => ({ event: 'mark', sequenceNumber: String(f.sequence), streamSid: f.streamId, mark: { name: f.name } }),
  stop: (f) => ({ event: 'stop', sequenceNumber: String(f.sequence), streamSid: f.streamId, stop: { accountSid: 'AC00000000000000000000000000000000', callSid: f.callId } }),
  parseOutbound(text, streamId) {
    const message = readJson(text);
    if (!message) return { kind: 'error', reason: `not JSON: ${text.slice(0, 80)}` };
    if (message.streamSid !== streamId) return { kind: 'error', reason: `${String(message.event)} names stream ${String(message.streamSid)}, not ${streamId}` };
    if (message.event === 'media') {
      const payload = payloadOf(message.media);
      return payload ? { kind: 'media', payload } : { kind: 'error', reason: 'media without a base64 payload' };
    }
    if (message.event === 'mark') {
      const name = (message.mark as { name?: unknown } | undefined)?.name;
      return typeof name === 'string' ? { kind: 'mark', name } : { kind: 'error', reason: 'mark without mark.name' };
    }
    if (message.event === 'clear') return { kind: 'clear' };
    return { kind: 'error', reason: `Twilio takes no ${String(message.event)} message` };
  },
};

const telnyx: CarrierMessages = {
  connected: () => ({ event: 'connected', version: '1.0.0' }),
  start: (f) => ({
    event: 'start',
    sequence_number: String(f.sequence),
    start: {
      user_id: '3e6f995f-85f7-4705-9741-53b116d28237',
      call_control_id: f.callId,
      call_session_id: 'b0e6141e-c81c-11f0-abac-02420aef93a0',
      client_state: null,
      from: f.from,
      to: f.to,
      custom_parameters: f.customParameters,
      media_format: { encoding: f.encoding === 'alaw' ? 'PCMA' : 'PCMU', sample_rate: 8000, channels: 1 },
    },
    stream_id: f.streamId,
  }),
  media: (f) => ({ event: 'media', sequence_number: String(f.sequence), media: { track: 'inbound', chunk: String(f.chunk), timestamp: String(f.timestamp), payload: b64(f.payload) }, stream_id: f.streamId }),
  dtmf: (f) => ({ event: 'dtmf', stream_id: f.streamId, occurred_at: new Date().toISOString(), sequence_number: String(f.sequence), dtmf: { digit: f.digit } }),
  markAck: (f) => ({ event: 'mark', sequence_number: String(f.sequence), stream_id: f.streamId, mark: { name: f.name } }),
  stop: (f) => ({ event: 'stop', sequence_number: String(f.sequence), stop: { user_id: '3e6f995f-85f7-4705-9741-53b116d28237', call_control_id: f.callId }, stream_id: f.streamId }),
  parseOutbound(text) {
    const message = readJson(text);
    if (!message) return { kind: 'error', reason: `not JSON: ${text.slice(0, 80)}` };
    if (message.event === 'media') {
      const payload = payloadOf(message.media);
      return payload ? { kind: 'media', payload } : { kind: 'error', reason: 'media without a base64 payload' };
    }
    if (message.event === 'mark') {
      const name = (message.mark as { name?: unknown } | undefined)?.name;
      return typeof name === 'string' ? { kind: 'mark', name } : { kind: 'error', reason: 'mark without mark.name' };
    }
    if (message.event === 'clear') return { kind: 'clear' };
    return { kind: 'error', reason: `Telnyx takes no ${String(message.event)} message` };
  },
};

const plivo: CarrierMessages = {
  // Plivo sends no connected message: start is the first.
  connected: () => null,
  start: (f) => ({
    event: 'start',
    sequenceNumber: f.sequence,
    start: { callId: f.callId, streamId: f.streamId, accountId: 'MA0000000000000000000', tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000 } },
    extra_headers: Object.entries(f.customParameters).map(([k, v]) => `${k}=${v}`).join(';'),
  }),
  media: (f) => ({ event: 'media', sequenceNumber: f.sequence, streamId: f.streamId, media: { track: 'inbound', timestamp: String(f.timestamp), chunk: f.chunk, payload: b64(f.payload) } }),
  dtmf: (f) => ({ event: 'dtmf', sequenceNumber: f.sequence, streamId: f.streamId, dtmf: { track: 'inbound', digit: f.digit } }),
  markAck: (f) => ({ event: 'playedStream', sequenceNumber: f.sequence, streamId: f.streamId, name: f.name }),
  cleared: (f) => ({ event: 'clearedAudio', sequenceNumber: f.sequence, streamId: f.streamId }),
  // The socket just closes.
  stop: () => null,
  parseOutbound(text, streamId) {
    const message = readJson(text);
    if (!message) return { kind: 'error', reason: `not JSON: ${text.slice(0, 80)}` };
    if (message.event === 'playAudio') {
      const media = message.media as { contentType?: unknown; sampleRate?: unknown } | undefined;
      if (media?.contentType !== 'audio/x-mulaw' || media.sampleRate !== 8000) return { kind: 'error', reason: 'playAudio must say contentType audio/x-mulaw and sampleRate 8000' };
      const payload = payloadOf(message.media);
      return payload ? { kind: 'media', payload } : { kind: 'error', reason: 'playAudio without a base64 payload' };
    }
    if (message.streamId !== streamId) return { kind: 'error', reason: `${String(message.event)} names stream ${String(message.streamId)}, not ${streamId}` };
    if (message.event === 'checkpoint') return typeof message.name === 'string' ? { kind: 'mark', name: message.name } : { kind: 'error', reason: 'checkpoint without a name' };
    if (message.event === 'clearAudio') return { kind: 'clear' };
    return { kind: 'error', reason: `Plivo takes no ${String(message.event)} message` };
  },
};

const BY_CARRIER: Record<CarrierName, CarrierMessages> = { twilio, telnyx, plivo };

export function carrierMessages(carrier: CarrierName): CarrierMessages {
  return BY_CARRIER[carrier];
}
