// A warm transfer's conference, in TwiML, which Telnyx's TeXML copies verb for verb
// (`<Dial><Conference>` with the same attributes):
// https://www.twilio.com/docs/voice/twiml/conference
// https://developers.telnyx.com/docs/voice/programmable-voice/texml-verbs/conference
//
// The caller is moved in first and waits to the carrier's hold music (startConferenceOnEnter
// false) while the person hears the summary; the person's arrival starts the conference. Either
// one leaving ends it, so nobody stays on a line with no one on the other end. No beeps: the
// caller was told they are being connected.
import type { Markup } from './carrier.ts';
import { attributes, escapeXml, xmlResponse } from './xml.ts';

function conference(name: string, startsIt: boolean): string {
  return `<Dial><Conference${attributes({ startConferenceOnEnter: String(startsIt), endConferenceOnExit: 'true', beep: 'false' })}>${escapeXml(name)}</Conference></Dial>`;
}

/** The caller's call, redirected into the conference: it waits there for the person. */
export function callerJoinsConference(name: string): Markup {
  return xmlResponse(conference(name, false));
}

/** The person's answer: the summary in the carrier's own voice (to them only), then the conference. */
export function personJoinsConference(name: string, summary: string): Markup {
  return xmlResponse(`${summary ? `<Say>${escapeXml(summary)}</Say>` : ''}${conference(name, true)}`);
}
