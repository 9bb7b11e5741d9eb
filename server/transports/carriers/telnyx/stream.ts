// Telnyx media-streaming messages: Twilio's events with snake_case fields (stream_id,
// sequence_number, media_format, call_control_id) and PCMU or PCMA audio. In: connected, start,
// media, dtmf, mark, stop, error. Out: media, mark, clear, which name no stream (one per socket).
// Media frames may arrive out of order: ReorderWindow puts them back by sequence_number.
// https://developers.telnyx.com/docs/voice/programmable-voice/media-streaming
import type { StreamMessage } from '../carrier.ts';
import { base64, decodePayload, dtmfMessage, integerAt, objectAt, parseMessageObject, stringAt, stringRecord } from '../stream-json.ts';

const ENCODING = { PCMU: 'mulaw', PCMA: 'alaw' } as const;

export function parseTelnyxStreamMessage(text: string): StreamMessage {
  const parsed = parseMessageObject(text);
  if (!parsed.ok) return parsed.malformed;
  const { message, event } = parsed;
  switch (event) {
    case 'connected':
      return { type: 'connected' };
    case 'start': {
      const start = objectAt(message, 'start');
      const streamId = stringAt(message, 'stream_id') ?? stringAt(start, 'stream_id');
      // A TeXML call's CallSid is its Call Control id; both name it.
      const callId = stringAt(start, 'call_control_id') ?? stringAt(start, 'call_sid');
      if (!start || !streamId || !callId) return { type: 'malformed', reason: 'start without stream_id and call_control_id' };
      const format = objectAt(start, 'media_format');
      const codec = stringAt(format, 'encoding') ?? 'PCMU';
      const encoding = ENCODING[codec as keyof typeof ENCODING];
      if (!encoding) return { type: 'malformed', reason: `unsupported media encoding ${codec}` };
      // TeXML <Parameter>s; Call Control's streaming_start sends custom_parameters as a list.
      const customParameters = stringRecord(start.custom_parameters ?? start.customParameters);
      return { type: 'start', streamId, callId, customParameters, encoding, sampleRate: integerAt(format, 'sample_rate') ?? 8000 };
    }
    case 'media': {
      const media = objectAt(message, 'media');
      const payload = decodePayload(media?.payload);
      if (!payload.ok) return { type: 'malformed', reason: payload.reason };
      // Put back in order by the media chunk number, which counts media frames only: the
      // message-level sequence_number also counts keys and marks, whose numbers would look like
      // lost audio and hold the frames after them.
      const sequence = integerAt(media, 'chunk') ?? integerAt(message, 'sequence_number');
      const timestamp = integerAt(media, 'timestamp');
      const track = stringAt(media, 'track');
      return { type: 'media', payload: payload.bytes, ...(sequence !== undefined ? { sequence } : {}), ...(timestamp !== undefined ? { timestamp } : {}), ...(track ? { track } : {}) };
    }
    case 'dtmf':
      return dtmfMessage(objectAt(message, 'dtmf'));
    case 'mark': {
      const name = stringAt(objectAt(message, 'mark'), 'name');
      return name ? { type: 'mark', name } : { type: 'malformed', reason: 'mark without a name' };
    }
    case 'stop':
      return { type: 'stop' };
    default:
      // 'error' (Telnyx refused a frame we sent) is for the log, not the call.
      return { type: 'ignored', event };
  }
}

export function telnyxMediaMessage(bytes: Uint8Array): string {
  return JSON.stringify({ event: 'media', media: { payload: base64(bytes) } });
}

export function telnyxMarkMessage(name: string): string {
  return JSON.stringify({ event: 'mark', mark: { name } });
}

export function telnyxClearMessage(): string {
  return JSON.stringify({ event: 'clear' });
}
