// Plivo XML. <Stream bidirectional keepCallAlive> holds the call on the stream until the socket
// closes; the URL is the element's text. The token rides in extraHeaders, which Plivo hands back
// in the start message and which accepts only letters and digits.
// https://www.plivo.com/docs/voice/xml/the-stream-element
//
// A warm transfer's conference is Plivo's <Conference> element (not inside a <Dial>): the caller
// waits in it first (startConferenceOnEnter false: silence, as Plivo plays no hold music unless
// given a waitSound), the person's arrival starts it, and either one leaving ends it.
// https://www.plivo.com/docs/voice/xml/the-conference-element
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

function plivoConference(name: string, startsIt: boolean): string {
  return `<Conference${attributes({ startConferenceOnEnter: String(startsIt), endConferenceOnExit: 'true' })}>${escapeXml(name)}</Conference>`;
}

/** The caller's call, pointed at this by Plivo's transfer: it waits in the conference for the person. */
export function plivoCallerJoinsConference(name: string): Markup {
  return xmlResponse(plivoConference(name, false));
}

/** The person's answer: the summary in Plivo's own voice (to them only), then the conference. */
export function plivoPersonJoinsConference(name: string, summary: string): Markup {
  return xmlResponse(`${summary ? `<Speak>${escapeXml(summary)}</Speak>` : ''}${plivoConference(name, true)}`);
}

export function plivoTransferMarkup(request: TransferRequest): Markup {
  const target = request.to.startsWith('sip:') ? `<User>${escapeXml(request.to)}</User>` : `<Number>${escapeXml(request.to)}</Number>`;
  return xmlResponse(`<Dial${attributes({ callerId: request.callerId })}>${target}</Dial><Hangup/>`);
}
