// An answering machine at the end of a placed call, as the carrier presents it to us.
//
// Twilio and Telnyx (synchronous detection that waits for the greeting's end): the call is
// answered, the carrier's detector hears the greeting out and fetches our markup with its verdict
// (AnsweredBy=machine_end_beep on the signed voice webhook), then, if the markup streams, opens
// the stream and records whatever we send down it until the call is hung up.
//
// Plivo (asynchronous detection): the call is answered and our markup fetched at once, with no
// verdict; the stream opens and carries the line as it is: the machine's greeting, its beep, then
// the silence it records in. While the greeting plays, Plivo's detector posts its verdict
// (Machine=true, signed) to the machine_detection_url. A person's line is silence, and the
// verdict says Machine=false.
import type { CarrierName } from '../../../server/transports/carriers/carrier.ts';
import { FakeCarrierStream, streamTargetFromMarkup } from './media-stream-client.ts';
import type { Callee, FakeCarrierApi } from './rest-server.ts';
import type { SentWebhook, WebhookSigner } from './voice-webhook.ts';

export interface PickedUp {
  /** Our markup, as the carrier received it. */
  answered: SentWebhook;
  /** The stream the markup opened (null when it hung up instead). */
  stream: FakeCarrierStream | null;
  /**
   * Plivo's machine: resolves once its beep has ended, to how many samples (8 kHz) it had heard
   * from us by then; what came after is what it recorded.
   */
  greetingOver?: Promise<number>;
}

export interface MachineLine {
  /** The greeting's speech, 16 kHz; the beep and the silence follow it. */
  greeting: Int16Array;
  /** When Plivo's detector posts its verdict, from the answer (ms). */
  verdictAfterMs?: number;
}

const BEEP_HZ = 1_000;
const BEEP_MS = 400;

/** The placed call `callId` is picked up by `callee`; a stream the markup names is opened, as the carrier would. */
export async function pickUp(api: FakeCarrierApi, carrier: CarrierName, signer: WebhookSigner, callId: string, callee: Callee, line?: MachineLine): Promise<PickedUp> {
  const call = api.calls.get(callId);
  if (!call) throw new Error(`no placed call ${callId}`);
  const answered = await api.answerPlacedCall(callId, signer, { answeredBy: callee });
  if (answered.status !== 200 || !/<Stream\b/.test(answered.body)) {
    // The markup ended the call: the carrier hangs up.
    call.status = 'completed';
    return { answered, stream: null };
  }
  const stream = await FakeCarrierStream.connect({ carrier, target: streamTargetFromMarkup(carrier, answered.body), callId: call.callId, from: call.from, to: call.to });
  if (carrier !== 'plivo' || !call.machineDetection) return { answered, stream };

  setTimeout(() => {
    if (stream.isOpen) void api.sendStatus(callId, signer, { answeredBy: callee === 'human' ? 'human' : 'machine_start' }).catch(() => undefined);
  }, line?.verdictAfterMs ?? 1_500);
  const greetingOver = (async () => {
    if (callee !== 'human' && line) {
      await stream.sendAudio(line.greeting, 16000);
      await stream.sendSilence(300);
      await stream.sendAudio(beep(), 8000);
    }
    return stream.receivedAudio().length;
  })();
  // The line carries on after the greeting: a carrier streams silence as well as sound.
  void greetingOver.then(async () => {
    while (stream.isOpen) await stream.sendSilence(200);
  });
  return { answered, stream, greetingOver };
}

/** A voicemail beep: a 1 kHz tone, 400 ms, at 8 kHz. */
function beep(): Int16Array {
  const samples = (8000 * BEEP_MS) / 1000;
  const pcm = new Int16Array(samples);
  for (let i = 0; i < samples; i++) pcm[i] = Math.round(10_000 * Math.sin((2 * Math.PI * BEEP_HZ * i) / 8000));
  return pcm;
}
