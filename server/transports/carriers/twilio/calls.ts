// Twilio's REST API for a live call: updating the Call resource ends it (Status=completed) or
// swaps its TwiML (a transfer's <Dial>); creating one places an outbound call.
// https://www.twilio.com/docs/voice/api/call-resource
//
// No sendDigits: Twilio plays keypad tones only from TwiML (<Play digits>), and new TwiML on a
// live call replaces the <Connect><Stream>, which would end the conversation.
import type { CarrierCalls, Markup, PlaceCallRequest, RestOptions, TransferRequest, TwilioCredentials } from '../carrier.ts';
import { apiUrl, basicAuth, carrierRequest } from '../rest.ts';
import { twilioTransferMarkup } from './markup.ts';

export const TWILIO_API = 'https://api.twilio.com';

export function twilioCalls(credentials: TwilioCredentials): CarrierCalls {
  const authorization = basicAuth(credentials.accountSid, credentials.authToken);
  const callsPath = `/2010-04-01/Accounts/${encodeURIComponent(credentials.accountSid)}/Calls`;
  const updateCall = (callId: string, form: URLSearchParams, options: RestOptions, alsoFine?: number[]) =>
    carrierRequest({ carrier: 'twilio', method: 'POST', url: apiUrl(options.baseUrl ?? TWILIO_API, `${callsPath}/${encodeURIComponent(callId)}.json`), authorization, form, alsoFine }, options);

  return {
    async hangUp(callId, options) {
      // 404: the call is already over (Twilio's error 20404), which is what we wanted.
      await updateCall(callId, new URLSearchParams({ Status: 'completed' }), options, [404]);
    },
    async transfer(callId: string, request: TransferRequest, options: RestOptions) {
      await updateCall(callId, new URLSearchParams({ Twiml: twilioTransferMarkup(request).body }), options);
    },
    async redirect(callId: string, markup: Markup, options: RestOptions) {
      await updateCall(callId, new URLSearchParams({ Twiml: markup.body }), options);
    },
    async placeCall(request: PlaceCallRequest, options: RestOptions) {
      const form = new URLSearchParams({
        To: request.to,
        From: request.from,
        Url: request.answerUrl,
        Method: 'POST',
        StatusCallback: request.statusUrl,
        StatusCallbackMethod: 'POST',
      });
      for (const event of ['initiated', 'ringing', 'answered', 'completed']) form.append('StatusCallbackEvent', event);
      if (request.machineDetection) {
        // Synchronous detection that waits for the greeting's end: Twilio fetches the answer URL
        // only once it knows, with AnsweredBy (human, or machine_end_beep|silence|other after
        // the beep, fax, unknown). So the verdict comes with the request that opens the stream,
        // on whichever node it reaches, and a message starts right after the beep; nothing is
        // said to a machine before it, and no verdict has to catch up with a call already
        // talking (as AsyncAmd's callback would). The price: a person who answers hears a
        // moment's silence while the detector listens, before the agent speaks.
        form.set('MachineDetection', 'DetectMessageEnd');
      }
      const created = await carrierRequest({ carrier: 'twilio', method: 'POST', url: apiUrl(options.baseUrl ?? TWILIO_API, `${callsPath}.json`), authorization, form }, options);
      const sid = (created as { sid?: unknown } | null)?.sid;
      if (typeof sid !== 'string' || sid === '') throw new Error('twilio created a call without a sid');
      return { callId: sid };
    },
  };
}
