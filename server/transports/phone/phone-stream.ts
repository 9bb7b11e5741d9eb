// One call's media stream, from the carrier's first message to the hang-up. The stream's URL
// carries the call's single-use token: it is claimed when the stream opens (once, on whichever
// node the carrier reached), and the carrier's `start` message must name the same call. A stream
// with an unknown, expired or reused token, or for another call, is closed with 1008 (policy
// violation) and charges nothing.
//
// Then the call runs as an engine session: caller audio in through the media bridge, keypad
// presses to the session, the agent's paced speech out. When the session ends first (the flow
// ended the call, credits ran out, the server is stopping), the carrier's REST API hangs the
// phone up, retried with backoff; when the caller hangs up first (`stop`, or the stream closes),
// the session ends and nothing is sent to the carrier. A transfer moves the call elsewhere
// through the carrier (cold: at once; warm: once the person answers, warm-transfer.ts), and the
// carrier then closes the stream: while one is being made, its outcome says whether a close was
// the caller hanging up.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { WebSocket } from 'ws';
import type { TransferAction, VoiceSession } from '../../engine/session.ts';
import { errorCodeOf } from '../../http/error-handler.ts';
import type { Session } from '../../store/store.ts';
import type { Carrier, StreamMessage } from '../carriers/carrier.ts';
import { CARRIERS, isCarrierName } from '../carriers/index.ts';
import { admitClaimedSession } from '../session-admission.ts';
import { openCarrierCredentials } from './carrier-credentials.ts';
import { CARRIER_RATE, PhoneMediaBridge } from './media-bridge.ts';
import { ReorderWindow } from '../carriers/reorder-window.ts';
import { carrierApiUrl } from './carrier-api.ts';
import { transferMarkupUrl } from './transfer-markup.ts';
import { listenForMachine, VOICEMAIL_LISTEN, VOICEMAIL_NOW, VOICEMAIL_PARAMETER } from './voicemail.ts';
import { WarmTransferCall, type TransferResult } from './warm-transfer.ts';

/** The carrier sends `connected` and `start` at once; a stream silent past this is closed. */
const START_TIMEOUT_MS = 10_000;
/** Hang-up through the carrier's API: attempts after the first, and how long each may take. */
const HANG_UP_RETRIES = 4;
const HANG_UP_TIMEOUT_MS = 5_000;

export const POLICY_VIOLATION = 1008;

export async function runPhoneStream(app: FastifyInstance, carrier: Carrier, socket: WebSocket, tokenHash: string, log: FastifyBaseLogger): Promise<void> {
  const { store } = app.services;
  const early: string[] = [];
  let onMessage: (text: string) => void = (text) => {
    if (early.length < 8) early.push(text);
  };
  socket.on('message', (data, isBinary) => {
    if (isBinary) return; // the carriers' streams are JSON text; a binary frame is nobody's audio
    onMessage(Buffer.isBuffer(data) ? data.toString('utf8') : Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data).toString('utf8'));
  });
  let session: VoiceSession | null = null;
  let callerGone = false;
  // The stream closed or stopped. Once the call runs, a transfer being made decides what that means.
  let callerLeft = (): void => {
    if (session) void session.end('caller_hung_up');
  };
  socket.on('close', () => {
    callerGone = true;
    callerLeft();
  });
  socket.on('error', (error) => log.warn({ err: error }, 'phone stream error'));

  const refuse = (reason: string) => {
    log.warn({ carrier: carrier.name, reason }, 'phone stream refused');
    if (socket.readyState === socket.OPEN) socket.close(POLICY_VIOLATION, reason.slice(0, 100));
  };

  let record: Session | null;
  try {
    record = await store.sessions.claim(tokenHash, Date.now() / 1000);
  } catch (error) {
    // Closing the stream ends the call at the carrier: nothing follows the stream in our markup.
    const atLimit = errorCodeOf(error) === 'too_many_sessions';
    refuse(atLimit ? 'the account is at its limit of live calls' : 'the call could not be claimed');
    if (!atLimit) log.error({ err: error }, 'phone stream could not claim its call');
    return;
  }
  if (!record || record.transport !== carrier.name) {
    refuse('unknown, expired or used stream token');
    return;
  }
  const claimed = record;
  if (callerGone) {
    await store.sessions.end(claimed.id, { endedAt: Date.now() / 1000, reason: 'caller_hung_up', creditsChargedCents: 0 });
    return;
  }

  // The carrier's `start` names the call and the stream; nothing runs before it.
  const start = await new Promise<Extract<StreamMessage, { type: 'start' }> | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), START_TIMEOUT_MS);
    const take = (text: string) => {
      const message = carrier.parseStreamMessage(text);
      if (message.type === 'start') {
        clearTimeout(timer);
        resolve(message);
      } else if (message.type === 'stop') {
        clearTimeout(timer);
        resolve(null);
      }
    };
    onMessage = take;
    for (const text of early.splice(0)) take(text);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(null);
    });
  });
  const endUnstarted = (reason: string) => store.sessions.end(claimed.id, { endedAt: Date.now() / 1000, reason, creditsChargedCents: 0 });
  if (!start) {
    refuse('no start message');
    await endUnstarted(callerGone ? 'caller_hung_up' : 'refused');
    return;
  }
  if (!claimed.carrierCallId || start.callId !== claimed.carrierCallId) {
    refuse('the stream is for another call');
    await endUnstarted('refused');
    return;
  }

  let admitted;
  try {
    admitted = await admitClaimedSession(app, claimed);
  } catch (error) {
    // Refused (and ended, charging nothing) by admission: no credit, the server full, the flow gone.
    log.warn({ err: error, carrier: carrier.name }, 'phone call refused at admission');
    if (socket.readyState === socket.OPEN) socket.close(1013, 'refused');
    void hangUp(app, carrier, claimed, log);
    return;
  }
  if (callerGone) {
    await admitted.refuse('caller_hung_up');
    return;
  }

  const bridge = new PhoneMediaBridge(start.encoding, {
    media: (bytes) => carrier.mediaMessage(start.streamId, bytes, start.encoding),
    mark: (name) => carrier.markMessage(start.streamId, name),
    clear: () => carrier.clearMessage(start.streamId),
  }, (text) => {
    if (socket.readyState === socket.OPEN) socket.send(text);
  });
  let malformedLogged = false;
  // Telnyx documents that its media frames may arrive out of order; the others' do not.
  const reorder = carrier.name === 'telnyx' ? new ReorderWindow<Uint8Array>() : null;
  // A transferred call is the carrier's to carry on: the stream ends, the phone call does not.
  let transferred = false;
  // The carrier closes the stream when it moves the call: while a transfer is being made, a close
  // may be that, not the caller hanging up.
  let coldTransfer: Promise<TransferResult> | null = null;
  let warmTransfer: WarmTransferCall | null = null;
  const rest = async () => {
    const credentials = await openCarrierCredentials(app.services, claimed.accountId, carrier.name);
    return credentials ? carrier.calls(credentials as never) : null;
  };
  const restOptions = (retries: number) => ({ baseUrl: carrierApiUrl(app.services.config, carrier.name), signal: AbortSignal.timeout(30_000), timeoutMs: 10_000, retries });
  // The carrier's verdict on the answered call, carried by our markup: an answering machine
  // past its greeting, to leave the flow's message on; or a verdict still to come while the
  // flow runs (Plivo), read from the store (voicemail.ts).
  const voicemailMode = claimed.direction === 'outbound' ? start.customParameters[VOICEMAIL_PARAMETER] : undefined;
  const leaveVoicemail = voicemailMode === VOICEMAIL_NOW;
  /** A cold transfer: the carrier moves the live call to the target, and Voxflow leaves. */
  const transferCold = async (action: TransferAction): Promise<TransferResult> => {
    const calls = await rest();
    if (!calls || !claimed.carrierCallId) return { ok: false, reason: `the account's ${carrier.name} credentials are missing` };
    try {
      // The caller sees the business's number, not the transferring line's own.
      const request = { to: action.to, ...(claimed.toNumber && claimed.direction === 'inbound' ? { callerId: claimed.toNumber } : {}) };
      await calls.transfer(claimed.carrierCallId, carrier.transfersByUrl ? { ...request, markupUrl: transferMarkupUrl(app, carrier, claimed, request) } : request, restOptions(2));
    } catch (error) {
      return { ok: false, reason: `${carrier.name} did not transfer the call: ${error instanceof Error ? error.message : String(error)}` };
    }
    transferred = true;
    await store.sessions.setTransferredTo(claimed.id, action.to);
    return { ok: true };
  };
  session = admitted.start({
    sendEvent: (event) => bridge.event(event),
    sendAudio: (frame) => bridge.agentAudio(frame),
    lineAudio: { sampleRate: CARRIER_RATE, record: (tap) => bridge.record(tap) },
    close: () => {
      void warmTransfer?.cancel('the call ended while the person was called');
      if (!callerGone && !transferred) void hangUp(app, carrier, claimed, log);
      if (socket.readyState === socket.OPEN) socket.close(1000, 'call ended');
    },
    transfer: async (action, help) => {
      if (action.mode === 'warm') {
        if (!help) return { ok: false, reason: 'a warm transfer needs the engine\'s summary' };
        const warm = new WarmTransferCall({
          app,
          carrier,
          call: claimed,
          action,
          help,
          log,
          endSession: (reason) => void session?.end(reason),
          ...(action.timeoutSeconds ? { ringTimeoutMs: action.timeoutSeconds * 1000 } : {}),
        });
        warmTransfer = warm;
        if (callerGone) warm.callerLeft();
        const result = await warm.outcome;
        warmTransfer = null;
        if (result.ok) transferred = true;
        return result;
      }
      coldTransfer = transferCold(action);
      const result = await coldTransfer;
      coldTransfer = null;
      return result;
    },
    sendDigits: async (digits: string) => {
      const calls = await rest();
      // Twilio takes no keypad tones into a call that streams media (new TwiML would end the stream).
      if (!calls?.sendDigits) throw new Error(`${carrier.name} cannot play keypad tones into a streaming call`);
      if (claimed.carrierCallId) await calls.sendDigits(claimed.carrierCallId, digits, restOptions(1));
    },
  }, { leaveVoicemail });
  const live = session;
  if (voicemailMode === VOICEMAIL_LISTEN) void listenForMachine(app, claimed.id, live, log);
  callerLeft = () => {
    if (warmTransfer) warmTransfer.callerLeft();
    else if (coldTransfer) {
      void coldTransfer.then((result) => {
        if (!result.ok) void live.end('caller_hung_up');
      });
    } else if (!transferred) void live.end('caller_hung_up');
  };
  onMessage = (text) => {
    const message = carrier.parseStreamMessage(text);
    switch (message.type) {
      case 'media': {
        const frames = reorder && message.sequence !== undefined ? reorder.push(message.sequence, message.payload) : [message.payload];
        for (const payload of frames) {
          const pcm = bridge.callerAudio(payload);
          if (pcm && pcm.length > 0) live.pushAudio(pcm);
        }
        return;
      }
      case 'dtmf':
        live.pushDigits(message.digit);
        return;
      case 'mark':
        bridge.markEchoed();
        return;
      case 'stop':
        callerGone = true;
        callerLeft();
        return;
      case 'malformed':
        bridge.counters.malformed++;
        if (!malformedLogged) {
          malformedLogged = true;
          log.warn({ carrier: carrier.name, reason: message.reason, session: claimed.id }, 'a malformed media-stream message was ignored');
        }
        return;
      default:
        return;
    }
  };
}

/**
 * The phone calls among sessions ended because the node holding them is gone (crashed, killed, or
 * cut off from the store past the node timeout: end_reason server_restarted), hung up at the
 * carrier from the node that ended them. A call whose stream died with its node is usually over
 * already (nothing follows the stream in our markup), and the carrier's "already over" counts as
 * hung up; but a node cut off from the store may still be streaming, and its call, no longer
 * billed, must not go on. A transferred call is the carrier's to carry on and is left alone.
 */
export async function hangUpCallsOfGoneNodes(app: FastifyInstance, sessionIds: readonly string[], log: FastifyBaseLogger): Promise<void> {
  for (const id of sessionIds) {
    const record = await app.services.store.sessions.findById(id).catch(() => null);
    if (!record || record.endReason !== 'server_restarted' || record.transferredTo || !isCarrierName(record.transport)) continue;
    await hangUp(app, CARRIERS[record.transport] as Carrier, record, log);
  }
}

/** Ends the call at the carrier; retried with backoff, and never holds up the session's end. */
async function hangUp(app: FastifyInstance, carrier: Carrier, record: Session, log: FastifyBaseLogger): Promise<void> {
  if (!record.carrierCallId) return;
  try {
    const credentials = await openCarrierCredentials(app.services, record.accountId, carrier.name);
    if (!credentials) return;
    await carrier.calls(credentials as never).hangUp(record.carrierCallId, {
      baseUrl: carrierApiUrl(app.services.config, carrier.name),
      signal: AbortSignal.timeout(HANG_UP_TIMEOUT_MS * (HANG_UP_RETRIES + 1) * 2),
      timeoutMs: HANG_UP_TIMEOUT_MS,
      retries: HANG_UP_RETRIES,
    });
  } catch (error) {
    log.error({ err: error, carrier: carrier.name, session: record.id }, 'could not hang up a call at the carrier');
  }
}
