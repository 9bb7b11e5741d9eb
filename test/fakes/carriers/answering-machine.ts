// An answering machine at the end of a placed call, as the carrier presents it to us: the call is
// answered, the carrier's detector hears the greeting out and fetches our markup with its verdict
// (AnsweredBy=machine_end_beep on the signed voice webhook), then, if the markup streams, opens
// the stream and records whatever we send down it until the call is hung up.
import type { CarrierName } from '../../../server/transports/carriers/carrier.ts';
import { FakeCarrierStream, streamTargetFromMarkup } from './media-stream-client.ts';
import type { Callee, FakeCarrierApi } from './rest-server.ts';
import type { SentWebhook, WebhookSigner } from './voice-webhook.ts';

export interface PickedUp {
  /** Our markup, as the carrier received it. */
  answered: SentWebhook;
  /** The stream the markup opened (null when it hung up instead). */
  stream: FakeCarrierStream | null;
}

/** The placed call `callId` is picked up by `callee`; a stream the markup names is opened, as the carrier would. */
export async function pickUp(api: FakeCarrierApi, carrier: CarrierName, signer: WebhookSigner, callId: string, callee: Callee): Promise<PickedUp> {
  const call = api.calls.get(callId);
  if (!call) throw new Error(`no placed call ${callId}`);
  const answered = await api.answerPlacedCall(callId, signer, { answeredBy: callee });
  if (answered.status !== 200 || !/<Stream\b/.test(answered.body)) {
    // The markup ended the call: the carrier hangs up.
    call.status = 'completed';
    return { answered, stream: null };
  }
  const stream = await FakeCarrierStream.connect({ carrier, target: streamTargetFromMarkup(carrier, answered.body), callId: call.callId, from: call.from, to: call.to });
  return { answered, stream };
}
