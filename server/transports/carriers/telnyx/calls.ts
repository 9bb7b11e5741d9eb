// Telnyx REST, bearer-authenticated. A TeXML call is ended or moved by updating it (Status, or
// new Texml); an outbound call is created through the account's TeXML application, which then
// fetches our answer markup like an inbound call. Keypad tones go through Call Control's
// send_dtmf, which takes the same id (a TeXML CallSid is the call's call_control_id).
// https://developers.telnyx.com/api-reference/texml-rest-commands/update-call
import type { CarrierCalls, Markup, PlaceCallRequest, RestOptions, TelnyxCredentials, TransferRequest } from '../carrier.ts';
import { DTMF_SEQUENCE } from '../carrier.ts';
import { apiUrl, carrierRequest } from '../rest.ts';
import { telnyxTransferMarkup } from './markup.ts';

export const TELNYX_API = 'https://api.telnyx.com';

export function telnyxCalls(credentials: TelnyxCredentials): CarrierCalls {
  const authorization = `Bearer ${credentials.apiKey}`;
  const texmlCalls = () => {
    if (!credentials.accountSid) throw new Error('telnyx: the TeXML account id is missing from the credentials');
    return `/v2/texml/Accounts/${encodeURIComponent(credentials.accountSid)}/Calls`;
  };
  const updateCall = (callId: string, form: URLSearchParams, options: RestOptions, alsoFine?: number[]) =>
    carrierRequest({ carrier: 'telnyx', method: 'POST', url: apiUrl(options.baseUrl ?? TELNYX_API, `${texmlCalls()}/${encodeURIComponent(callId)}`), authorization, form, alsoFine }, options);

  return {
    async hangUp(callId, options) {
      // 404 and 422: the call is already over.
      await updateCall(callId, new URLSearchParams({ Status: 'completed' }), options, [404, 422]);
    },
    async transfer(callId: string, request: TransferRequest, options: RestOptions) {
      await updateCall(callId, new URLSearchParams({ Texml: telnyxTransferMarkup(request).body }), options);
    },
    async redirect(callId: string, markup: Markup, options: RestOptions) {
      await updateCall(callId, new URLSearchParams({ Texml: markup.body }), options);
    },
    async placeCall(request: PlaceCallRequest, options: RestOptions) {
      if (!credentials.applicationSid) throw new Error('telnyx: the TeXML application id is missing from the credentials');
      const body: Record<string, unknown> = {
        ApplicationSid: credentials.applicationSid,
        To: request.to,
        From: request.from,
        Url: request.answerUrl,
        UrlMethod: 'POST',
        StatusCallback: request.statusUrl,
        StatusCallbackMethod: 'POST',
        StatusCallbackEvent: 'initiated ringing answered completed',
      };
      if (request.machineDetection) {
        // Synchronous, as for Twilio (see twilio/calls.ts): TeXML holds the call's instructions
        // until the detector is done and sends AnsweredBy with them, after the greeting's end.
        Object.assign(body, { MachineDetection: 'DetectMessageEnd', AsyncAmd: false });
      }
      const created = (await carrierRequest({ carrier: 'telnyx', method: 'POST', url: apiUrl(options.baseUrl ?? TELNYX_API, texmlCalls()), authorization, json: body }, options)) as Record<string, unknown> | null;
      const callId = created?.call_sid ?? created?.sid ?? (created?.data as Record<string, unknown> | undefined)?.call_sid;
      if (typeof callId !== 'string' || callId === '') throw new Error('telnyx created a call without a call_sid');
      return { callId };
    },
    async sendDigits(callId: string, digits: string, options: RestOptions) {
      if (!DTMF_SEQUENCE.test(digits)) throw new RangeError('digits may hold only 0-9, *, #, A-D and w');
      await carrierRequest({ carrier: 'telnyx', method: 'POST', url: apiUrl(options.baseUrl ?? TELNYX_API, `/v2/calls/${encodeURIComponent(callId)}/actions/send_dtmf`), authorization, json: { digits } }, options);
    },
  };
}
