// Plivo audio-stream messages. In: start, media, dtmf, playedStream (a checkpoint's audio has
// played), clearedAudio; the socket closing ends the stream. Out: playAudio, checkpoint,
// clearAudio.
// https://www.plivo.com/docs/voice/audio-streaming/audio-streaming
import type { StreamMessage } from '../carrier.ts';
import { base64, decodePayload, dtmfMessage, integerAt, objectAt, parseMessageObject, stringAt } from '../stream-json.ts';

export function parsePlivoStreamMessage(text: string): StreamMessage {
  const parsed = parseMessageObject(text);
  if (!parsed.ok) return parsed.malformed;
  const { message, event } = parsed;
  switch (event) {
    case 'start': {
      const start = objectAt(message, 'start');
      const streamId = stringAt(start, 'streamId') ?? stringAt(message, 'streamId');
      const callId = stringAt(start, 'callId');
      if (!start || !streamId || !callId) return { type: 'malformed', reason: 'start without streamId and callId' };
      const format = objectAt(start, 'mediaFormat');
      const encoding = stringAt(format, 'encoding') ?? 'audio/x-mulaw';
      if (encoding !== 'audio/x-mulaw') return { type: 'malformed', reason: `unsupported media encoding ${encoding}` };
      const customParameters = extraHeaders(stringAt(message, 'extra_headers') ?? stringAt(start, 'extra_headers'));
      return { type: 'start', streamId, callId, customParameters, encoding: 'mulaw', sampleRate: integerAt(format, 'sampleRate') ?? 8000 };
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
    case 'playedStream': {
      const name = stringAt(message, 'name');
      return name ? { type: 'mark', name } : { type: 'malformed', reason: 'playedStream without a name' };
    }
    case 'stop':
      return { type: 'stop' };
    default:
      return { type: 'ignored', event };
  }
}

/** "token=abc;user=7" (the docs show ';', the XML attribute takes ','): both are split. */
function extraHeaders(value: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (value ?? '').split(/[;,]/)) {
    const at = pair.indexOf('=');
    if (at > 0) out[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return out;
}

export function plivoMediaMessage(bytes: Uint8Array): string {
  return JSON.stringify({ event: 'playAudio', media: { contentType: 'audio/x-mulaw', sampleRate: 8000, payload: base64(bytes) } });
}

export function plivoCheckpointMessage(streamId: string, name: string): string {
  return JSON.stringify({ event: 'checkpoint', streamId, name });
}

export function plivoClearMessage(streamId: string): string {
  return JSON.stringify({ event: 'clearAudio', streamId });
}
