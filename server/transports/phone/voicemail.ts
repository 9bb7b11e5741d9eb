// What an outbound call does with the carrier's answering-machine verdict (a flow's
// `settings.voicemail`, docs/phone-flows.md). The carrier is asked to detect a machine only when
// the flow sets `voicemail.detect`; Twilio and Telnyx detect synchronously and wait for the end of
// the greeting (the beep), so the verdict arrives with the request that fetches the call's markup
// (twilio/calls.ts says why that mode). Then:
//
//   a person (or no verdict, or "unknown")  the flow runs as on any call
//   a machine, and the flow has a message   the stream opens in voicemail mode: the message is
//                                           said in the flow's voice, then the call is hung up
//                                           through the carrier's REST API; the session ends
//                                           `voicemail`, billed as any session
//   a machine, and no message               the markup hangs up at once; the session ends
//                                           `voicemail` and nothing is charged (nothing ran)
//   a fax                                   the markup hangs up at once; the session ends `fax`,
//                                           nothing charged: a fax line has no one to talk to
//
// The voicemail mode rides in the stream's markup as a parameter the carrier hands back in its
// start message, like the token, so the node that takes the stream knows it whatever node
// answered the webhook.
import type { FastifyInstance } from 'fastify';
import { EngineRefusal } from '../../engine/voice-engine.ts';
import type { Session } from '../../store/store.ts';
import type { AnsweredBy } from '../carriers/carrier.ts';

/** The start message's parameter that puts a stream in voicemail mode. */
export const VOICEMAIL_PARAMETER = 'voicemail';

export type MachineVerdict =
  /** Run the flow. */
  | { kind: 'flow' }
  /** Open the stream in voicemail mode: leave the message, then hang up. */
  | { kind: 'leave_message' }
  /** Hang up in the markup; the session ends with this reason, charging nothing. */
  | { kind: 'hang_up'; reason: 'voicemail' | 'fax' };

/** Decides what an answered outbound call does with the carrier's verdict, by its flow's `settings.voicemail`. */
export async function machineVerdict(app: FastifyInstance, session: Session, answeredBy: AnsweredBy | undefined): Promise<MachineVerdict> {
  if (answeredBy === undefined || answeredBy === 'human' || answeredBy === 'unknown' || !session.flowId) return { kind: 'flow' };
  let voicemail;
  try {
    voicemail = (await app.services.engine.prepareFlow(session.accountId, session.flowId)).document.settings?.voicemail;
  } catch (error) {
    // The flow is gone or broken: the stream's admission refuses the call and says why.
    if (error instanceof EngineRefusal) return { kind: 'flow' };
    throw error;
  }
  // A flow republished without detection since the call was placed runs as it now says.
  if (voicemail?.detect !== true) return { kind: 'flow' };
  if (answeredBy === 'fax') return { kind: 'hang_up', reason: 'fax' };
  // The message's placeholders are rendered when it is said; one that is blank as written is none.
  return voicemail.message?.trim() ? { kind: 'leave_message' } : { kind: 'hang_up', reason: 'voicemail' };
}

/** A call hung up in its markup before its stream opened: its session ends with the reason, charging nothing. */
export async function endUnstreamed(app: FastifyInstance, session: Session, reason: string): Promise<void> {
  await app.services.store.sessions.end(session.id, { endedAt: Date.now() / 1000, reason, creditsChargedCents: 0 });
}
