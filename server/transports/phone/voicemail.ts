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
//
// Plivo detects only while the call runs (asynchronously) and never says when the greeting ends.
// Its call is answered with the flow, as any call, and the stream is told to listen for a
// verdict: Plivo posts it to the status URL, on whichever node, which keeps it on the session
// (sessions.setAnsweredBy); the node holding the stream reads it there while the detector may
// still speak. A person: nothing changes. A machine: the engine stops the flow, hears the
// greeting out on the line itself (engine/greeting-end.ts) and leaves the message, or ends the
// call at once when the flow has none.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { EngineRefusal } from '../../engine/voice-engine.ts';
import type { Session } from '../../store/store.ts';
import type { AnsweredBy, Carrier } from '../carriers/carrier.ts';

/** The start message's parameter that puts a stream in voicemail mode. */
export const VOICEMAIL_PARAMETER = 'voicemail';
/** Its value when the message is to be left now ('1'), or when a verdict may come later ('listen'). */
export const VOICEMAIL_NOW = '1';
export const VOICEMAIL_LISTEN = 'listen';

/**
 * How long the stream's node reads the session for a verdict that comes while the call runs:
 * Plivo's detector listens 5 s from the answer (plivo/calls.ts), and its callback may take a few
 * seconds more; a verdict later than this is no longer acted on.
 */
export const MACHINE_VERDICT_WAIT_MS = 15_000;
const MACHINE_VERDICT_POLL_MS = 500;

export type MachineVerdict =
  /** Run the flow. */
  | { kind: 'flow' }
  /** Open the stream in voicemail mode: leave the message, then hang up. */
  | { kind: 'leave_message' }
  /** Run the flow, and listen for the carrier's verdict, which comes while the call runs. */
  | { kind: 'listen_for_machine' }
  /** Hang up in the markup; the session ends with this reason, charging nothing. */
  | { kind: 'hang_up'; reason: 'voicemail' | 'fax' };

/** Decides what an answered outbound call does with the carrier's verdict, by its flow's `settings.voicemail`. */
export async function machineVerdict(app: FastifyInstance, carrier: Carrier, session: Session, answeredBy: AnsweredBy | undefined): Promise<MachineVerdict> {
  if (answeredBy === 'human' || answeredBy === 'unknown' || !session.flowId) return { kind: 'flow' };
  if (answeredBy === undefined && !carrier.asyncMachineDetection) return { kind: 'flow' };
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
  if (answeredBy === undefined) return { kind: 'listen_for_machine' };
  if (answeredBy === 'fax') return { kind: 'hang_up', reason: 'fax' };
  // The message's placeholders are rendered when it is said; one that is blank as written is none.
  return voicemail.message?.trim() ? { kind: 'leave_message' } : { kind: 'hang_up', reason: 'voicemail' };
}

/** A call hung up in its markup before its stream opened: its session ends with the reason, charging nothing. */
export async function endUnstreamed(app: FastifyInstance, session: Session, reason: string): Promise<void> {
  await app.services.store.sessions.end(session.id, { endedAt: Date.now() / 1000, reason, creditsChargedCents: 0 });
}

/** What the stream's node needs of the session while it listens for a verdict. */
export interface ListeningSession {
  readonly isEnded: boolean;
  machineAnswered(): void;
}

/**
 * Reads the session's answering-machine verdict, kept by whichever node the carrier's callback
 * reached, until one is there, the session ends, or MACHINE_VERDICT_WAIT_MS have passed. A
 * machine turns the session to leaving the message; a person changes nothing.
 */
export async function listenForMachine(app: FastifyInstance, sessionId: string, session: ListeningSession, log: FastifyBaseLogger): Promise<void> {
  const until = performance.now() + MACHINE_VERDICT_WAIT_MS;
  while (performance.now() < until && !session.isEnded) {
    await new Promise((resolve) => setTimeout(resolve, MACHINE_VERDICT_POLL_MS));
    let record: Session | null;
    try {
      record = await app.services.store.sessions.findById(sessionId);
    } catch (error) {
      log.warn({ err: error, session: sessionId }, 'could not read an answering-machine verdict');
      continue;
    }
    if (!record || record.status === 'ended' || record.answeredBy === 'human') return;
    if (record.answeredBy === 'machine') {
      if (!session.isEnded) session.machineAnswered();
      return;
    }
  }
}
