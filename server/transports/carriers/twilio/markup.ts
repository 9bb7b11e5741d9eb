// TwiML. <Connect><Stream> opens a bidirectional stream and holds the call until the socket
// closes. Twilio's Stream url may carry no query string, so the stream token travels as a
// <Parameter>, which Twilio hands back in the start message's customParameters.
// https://www.twilio.com/docs/voice/twiml/stream
import type { Markup, StreamOptions, TransferRequest } from '../carrier.ts';
import { attributes, escapeXml, NOT_IN_SERVICE_TEXT, streamParameters, xmlResponse } from '../xml.ts';

export function twilioAnswerWithStream(streamUrl: string, options: StreamOptions): Markup {
  const parameters = streamParameters(options)
    .map(([name, value]) => `<Parameter${attributes({ name, value })}/>`)
    .join('');
  return xmlResponse(`<Connect><Stream${attributes({ url: streamUrl })}>${parameters}</Stream></Connect>`);
}

export function twilioHangUp(): Markup {
  return xmlResponse('<Hangup/>');
}

export function twilioSayAndHangUp(text: string): Markup {
  return xmlResponse(`<Say>${escapeXml(text)}</Say><Hangup/>`);
}

export function twilioNotInService(): Markup {
  return twilioSayAndHangUp(NOT_IN_SERVICE_TEXT);
}

/** Dials the target; once that leg ends, so does the call. */
export function twilioTransferMarkup(request: TransferRequest): Markup {
  const target = request.to.startsWith('sip:') ? `<Sip>${escapeXml(request.to)}</Sip>` : `<Number>${escapeXml(request.to)}</Number>`;
  return xmlResponse(`<Dial${attributes({ callerId: request.callerId })}>${target}</Dial><Hangup/>`);
}
