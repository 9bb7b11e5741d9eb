// Plivo's REST API (basic auth with the auth id and token). A live call is moved only by pointing
// it at a URL that answers with new XML (the call's transfer, `aleg_url`), so a transfer needs
// `markupUrl` (serving plivoTransferMarkup) and a warm transfer's caller is moved the same way;
// keypad tones have their own endpoint.
// https://www.plivo.com/docs/voice/api/call
//
// A placed call is named by its request_uuid until it is answered (or rings: the ring and hangup
// callbacks carry both ids), and by its CallUUID from then on. A hang-up tries the live call
// first, then the request: Plivo cancels a call that has not been answered yet through
// DELETE Request/{request_uuid}/.
import { ProviderError } from '../../../providers/types.ts';
import type { CarrierCalls, PlaceCallRequest, PlivoCredentials, RestOptions, TransferRequest } from '../carrier.ts';
import { DTMF_SEQUENCE } from '../carrier.ts';
import { apiUrl, basicAuth, CarrierHttpError, carrierRequest } from '../rest.ts';

export const PLIVO_API = 'https://api.plivo.com';

/** Plivo's async machine detection listens this long (its range is 2000–10000 ms, 5000 by default). */
export const PLIVO_MACHINE_DETECTION_MS = 5_000;

export function plivoCalls(credentials: PlivoCredentials): CarrierCalls {
  const authorization = basicAuth(credentials.authId, credentials.authToken);
  const account = `/v1/Account/${encodeURIComponent(credentials.authId)}/`;
  const url = (options: RestOptions, path: string) => apiUrl(options.baseUrl ?? PLIVO_API, `${account}${path}`);
  const pointAt = async (callId: string, markupUrl: string, options: RestOptions) => {
    const json = { legs: 'aleg', aleg_url: markupUrl, aleg_method: 'POST' };
    await carrierRequest({ carrier: 'plivo', method: 'POST', url: url(options, `Call/${encodeURIComponent(callId)}/`), authorization, json }, options);
  };

  return {
    async hangUp(callId, options) {
      try {
        await carrierRequest({ carrier: 'plivo', method: 'DELETE', url: url(options, `Call/${encodeURIComponent(callId)}/`), authorization }, options);
      } catch (error) {
        if (!isNotFound(error)) throw error;
        // No live call by that id: a placed call not answered yet (cancelled by its request_uuid),
        // or a call already over (404 here too).
        await carrierRequest({ carrier: 'plivo', method: 'DELETE', url: url(options, `Request/${encodeURIComponent(callId)}/`), authorization, alsoFine: [404] }, options);
      }
    },
    async transfer(callId: string, request: TransferRequest, options: RestOptions) {
      if (!request.markupUrl) throw new Error('plivo transfers a call only to a markupUrl that serves the <Dial>');
      await pointAt(callId, request.markupUrl, options);
    },
    redirectToUrl: pointAt,
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
      // Asynchronous: the call runs while the detector listens, and its verdict is posted to the
      // status URL (Machine=true|false).
      if (request.machineDetection) {
        Object.assign(json, { machine_detection: 'true', machine_detection_time: String(PLIVO_MACHINE_DETECTION_MS), machine_detection_url: request.statusUrl, machine_detection_method: 'POST' });
      }
      const created = (await carrierRequest({ carrier: 'plivo', method: 'POST', url: url(options, 'Call/'), authorization, json }, options)) as { request_uuid?: unknown } | null;
      const requestUuid = created?.request_uuid;
      if (typeof requestUuid !== 'string' || requestUuid === '') throw new Error('plivo placed a call without a request_uuid');
      return { callId: requestUuid };
    },
    async sendDigits(callId: string, digits: string, options: RestOptions) {
      if (!DTMF_SEQUENCE.test(digits)) throw new RangeError('digits may hold only 0-9, *, #, A-D and w');
      await carrierRequest({ carrier: 'plivo', method: 'POST', url: url(options, `Call/${encodeURIComponent(callId)}/DTMF/`), authorization, json: { digits, leg: 'aleg' } }, options);
    },
  };
}

function isNotFound(error: unknown): boolean {
  const http = error instanceof CarrierHttpError ? error : error instanceof ProviderError && error.cause instanceof CarrierHttpError ? error.cause : null;
  return http?.status === 404;
}
