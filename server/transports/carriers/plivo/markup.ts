// Plivo XML. <Stream bidirectional keepCallAlive> holds the call on the stream until the socket
// closes; the URL is the element's text. The token rides in extraHeaders, which Plivo hands back
// in the start message and which accepts only letters and digits.
// https://www.plivo.com/docs/voice/xml/the-stream-element
import type { Markup, StreamOptions, TransferRequest } from '../carrier.ts';
import { attributes, escapeXml, NOT_IN_SERVICE_TEXT, streamParameters, xmlResponse } from '../xml.ts';

export function plivoAnswerWithStream(streamUrl: string, options: StreamOptions): Markup {
  const extraHeaders = streamParameters(options)
    .map(([name, value]) => `${name}=${value}`)
    .join(',');
  const stream = attributes({ bidirectional: 'true', keepCallAlive: 'true', contentType: 'audio/x-mulaw;rate=8000', extraHeaders });
  return xmlResponse(`<Stream${stream}>${escapeXml(streamUrl)}</Stream>`);
}

export function plivoHangUp(): Markup {
  return xmlResponse('<Hangup/>');
}

export function plivoSayAndHangUp(text: string): Markup {
  return xmlResponse(`<Speak>${escapeXml(text)}</Speak><Hangup/>`);
}

export function plivoNotInService(): Markup {
  return plivoSayAndHangUp(NOT_IN_SERVICE_TEXT);
}

export function plivoTransferMarkup(request: TransferRequest): Markup {
  const target = request.to.startsWith('sip:') ? `<User>${escapeXml(request.to)}</User>` : `<Number>${escapeXml(request.to)}</Number>`;
  return xmlResponse(`<Dial${attributes({ callerId: request.callerId })}>${target}</Dial><Hangup/>`);
}
