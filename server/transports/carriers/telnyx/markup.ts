// TeXML, Telnyx's TwiML. <Connect><Stream bidirectionalMode="rtp"> streams raw G.711 both ways
// (the default mode, mp3, plays whole files back instead); the token travels as a <Parameter>,
// which Telnyx hands back in the start message.
// https://developers.telnyx.com/docs/voice/programmable-voice/texml-verbs/stream
import type { G711Law } from '../../../audio/g711.ts';
import type { Markup, StreamOptions, TransferRequest } from '../carrier.ts';
import { attributes, escapeXml, NOT_IN_SERVICE_TEXT, streamParameters, xmlResponse } from '../xml.ts';

const CODEC: Record<G711Law, string> = { mulaw: 'PCMU', alaw: 'PCMA' };

export function telnyxAnswerWithStream(streamUrl: string, options: StreamOptions): Markup {
  const codec = CODEC[options.encoding ?? 'mulaw'];
  const stream = attributes({ url: streamUrl, track: 'inbound_track', codec, bidirectionalMode: 'rtp', bidirectionalCodec: codec });
  const parameters = streamParameters(options)
    .map(([name, value]) => `<Parameter${attributes({ name, value })}/>`)
    .join('');
  return xmlResponse(`<Connect><Stream${stream}>${parameters}</Stream></Connect>`);
}

export function telnyxHangUp(): Markup {
  return xmlResponse('<Hangup/>');
}

export function telnyxSayAndHangUp(text: string): Markup {
  return xmlResponse(`<Say>${escapeXml(text)}</Say><Hangup/>`);
}

export function telnyxNotInService(): Markup {
  return telnyxSayAndHangUp(NOT_IN_SERVICE_TEXT);
}

export function telnyxTransferMarkup(request: TransferRequest): Markup {
  const target = request.to.startsWith('sip:') ? `<Sip>${escapeXml(request.to)}</Sip>` : `<Number>${escapeXml(request.to)}</Number>`;
  return xmlResponse(`<Dial${attributes({ callerId: request.callerId })}>${target}</Dial><Hangup/>`);
}
