// Plivo's REST API (basic auth with the auth id and token). A live call is moved only by pointing
// it at a URL that answers with new XML, so a transfer needs `markupUrl` (serving
// plivoTransferMarkup); keypad tones have their own endpoint.
// https://www.plivo.com/docs/voice/api/call
import type { CarrierCalls, PlaceCallRequest, PlivoCredentials, RestOptions, TransferRequest } from '../carrier.ts';
import { DTMF_SEQUENCE } from '../carrier.ts';
import { apiUrl, basicAuth, carrierRequest } from '../rest.ts';

export const PLIVO_API = 'https://api.plivo.com';

export function plivoCalls(credentials: PlivoCredentials): CarrierCalls {
  const authorization = basicAuth(credentials.authId, credentials.authToken);
  const account = `/v1/Account/${encodeURIComponent(credentials.authId)}/Call/`;
  const url = (options: RestOptions, path: string) => apiUrl(options.baseUrl ?? PLIVO_API, `${account}${path}`);

  return {
    async hangUp(callId, options) {
      // 404: the call is already over.
      await carrierRequest({ carrier: 'plivo', method: 'DELETE', url: url(options, `${encodeURIComponent(callId)}/`), authorization, alsoFine: [404] }, options);
    },
    async transfer(callId: string, request: TransferRequest, options: RestOptions) {
      if (!request.markupUrl) throw new Error('plivo transfers a call only to a markupUrl that serves the <Dial>');
      const json = { legs: 'aleg', aleg_url: request.markupUrl, aleg_method: 'POST' };
      await carrierRequest({ carrier: 'plivo', method: 'POST', url: url(options, `${encodeURIComponent(callId)}/`), authorization, json }, options);
    },
    async placeCall(request: PlaceCallRequest, options: RestOptions) {
      const json: Record<string, string> = {
        from: request.from,
        to: request.to,
        answer_url: request.answerUrl,
        answer_method: 'POST',
        ring_url: request.statusUrl,
        ring_method: 'POST',
        hangup_url: request.statusUrl,
        hangup_method: 'POST',
      };
      if (request.machineDetection) Object.assign(json, { machine_detection: 'true', machine_detection_url: request.statusUrl, machine_detection_method: 'POST' });
      const created = (await carrierRequest({ carrier: 'plivo', method: 'POST', url: url(options, ''), authorization, json }, options)) as { request_uuid?: unknown } | null;
      const requestUuid = created?.request_uuid;
      if (typeof requestUuid !== 'string' || requestUuid === '') throw new Error('plivo placed a call without a request_uuid');
      return { callId: requestUuid };
    },
    async sendDigits(callId: string, digits: string, options: RestOptions) {
      if (!DTMF_SEQUENCE.test(digits)) throw new RangeError('digits may hold only 0-9, *, #, A-D and w');
      await carrierRequest({ carrier: 'plivo', method: 'POST', url: url(options, `${encodeURIComponent(callId)}/DTMF/`), authorization, json: { digits, leg: 'aleg' } }, options);
    },
  };
}
