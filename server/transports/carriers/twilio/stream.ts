// Twilio Media Streams messages. In: connected, start, media, dtmf, mark, stop. Out: media, mark,
// clear, each naming the stream. Twilio echoes a mark once the audio sent before it has played,
// and echoes every pending mark at once when we clear.
// https://www.twilio.com/docs/voice/media-streams/websocket-messages
import type { StreamMessage } from '../carrier.ts';
import { base64, decodePayload, dtmfMessage, integerAt, objectAt, parseMessageObject, stringAt, stringRecord } from '../stream-json.ts';

export function parseTwilioStreamMessage(text: string): StreamMessage {
  const parsed = parseMessageObject(text);
  if (!parsed.ok) return parsed.malformed;
  const { message, event } = parsed;
  switch (event) {
    case 'connected':
      return { type: 'connected' };
    case 'start': {
      const start = objectAt(message, 'start');
      const streamId = stringAt(start, 'streamSid') ?? stringAt(message, 'streamSid');
      const callId = stringAt(start, 'callSid');
      if (!start || !streamId || !callId) return { type: 'malformed', reason: 'start without streamSid and callSid' };
      const format = objectAt(start, 'mediaFormat');
      const encoding = stringAt(format, 'encoding') ?? 'audio/x-mulaw';
      if (encoding !== 'audio/x-mulaw') return { type: 'malformed', reason: `unsupported media encoding ${encoding}` };
      return { type: 'start', streamId, callId, customParameters: stringRecord(start.customParameters), encoding: 'mulaw', sampleRate: integerAt(format, 'sampleRate') ?? 8000 };
    }
    case 'media': {
      const media = objectAt(message, 'media');
      const payload = decodePayload(media?.payload);
      if (!payload.ok) return { type: 'malformed', reason: payload.reason };
      const sequence = integerAt(message, 'sequenceNumber');
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
      return { type: 'ignored', event };
  }
}

export function twilioMediaMessage(streamId: string, bytes: Uint8Array): string {
  return JSON.stringify({ event: 'media', streamSid: streamId, media: { payload: base64(bytes) } });
}

export function twilioMarkMessage(streamId: string, name: string): string {
  return JSON.stringify({ event: 'mark', streamSid: streamId, mark: { name } });
}

export function twilioClearMessage(streamId: string): string {
  return JSON.stringify({ event: 'clear', streamSid: streamId });
}
