// A warm transfer, on the node that holds the caller's stream. The caller stays on the stream
// (the engine says a hold line) while the carrier dials the person as a new call from the
// business's number. The person's answer and the leg's status reach whichever node the carrier
// picks (warm-transfer-routes.ts), which records them in the store and moves the caller's call
// into the conference itself; this node only reads the transfer's state, about once a second,
// so no node ever has to talk to another.
//
// Ends in one of three ways:
// - joined: the caller's call was moved into the conference with the person; the session ends
//   `transferred` and nothing is hung up (the carrier closes the stream as it moves the call).
// - failed (no answer, busy, the carrier refused, nobody within the ring timeout): the person's
//   leg is hung up if it still rings, and the caller, still on the stream, goes to `on_failed`.
// - the caller hung up while the person's phone rang: the leg is hung up, the session ends
//   `caller_hung_up`.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { TransferAction, WarmTransferHelp } from '../../engine/session.ts';
import { newSessionToken } from '../../security/opaque-tokens.ts';
import type { Session, WarmTransfer } from '../../store/store.ts';
import type { Carrier, CarrierCalls } from '../carriers/carrier.ts';
import { carrierApiUrl } from './carrier-api.ts';
import { openCarrierCredentials } from './carrier-credentials.ts';

/** How long the person's phone may ring before the caller is taken back. */
export const WARM_RING_TIMEOUT_MS = 30_000;
/** How often the stream's node reads the transfer's state while it waits. */
export const WARM_POLL_MS = 1_000;
/** Moving the caller into the conference (after the person answered) takes at most this long. */
const JOIN_TIMEOUT_MS = 30_000;

export type TransferResult = { ok: true } | { ok: false; reason: string };

export interface WarmTransferOptions {
  app: FastifyInstance;
  carrier: Carrier;
  /** The caller's session, as claimed. */
  call: Session;
  action: TransferAction;
  help: WarmTransferHelp;
  log: FastifyBaseLogger;
  /** The caller has gone: the session ends with this reason. */
  endSession(reason: string): void;
  ringTimeoutMs?: number;
  pollMs?: number;
}

/** The conference both sides join: one per session. */
export function conferenceName(sessionId: string): string {
  return `voxflow-${sessionId}`;
}

export class WarmTransferCall {
  readonly outcome: Promise<TransferResult>;
  #transfer: WarmTransfer | null = null;
  #calls: CarrierCalls | null = null;
  #wake: (() => void) | null = null;
  #callerGone = false;
  #settled = false;

  constructor(private readonly options: WarmTransferOptions) {
    this.outcome = this.#run().then(
      (result) => {
        this.#settled = true;
        return result;
      },
      (error: unknown) => {
        this.#settled = true;
        return { ok: false as const, reason: `the transfer could not be made: ${error instanceof Error ? error.message : String(error)}` };
      },
    );
  }

  /**
   * The caller's stream closed or stopped: either the carrier moved the call into the conference
   * (the transfer was answered), or the caller hung up. Safe to call more than once.
   */
  callerLeft(): void {
    if (this.#callerGone) return;
    this.#callerGone = true;
    void this.#afterCallerLeft();
  }

  /** The session ended another way (the server stops, credit ran out) while the phone rang. */
  async cancel(reason: string): Promise<void> {
    if (this.#settled || !this.#transfer) return;
    await this.options.app.services.store.warmTransfers.move(this.#transfer.id, ['dialing'], 'cancelled', reason);
    this.#wake?.();
  }

  async #afterCallerLeft(): Promise<void> {
    const { store } = this.options.app.services;
    const transfer = this.#transfer;
    if (transfer && !this.#settled) {
      const cancelled = await store.warmTransfers.move(transfer.id, ['dialing'], 'cancelled', 'the caller hung up while the person was called');
      if (cancelled) {
        this.options.endSession('caller_hung_up');
        this.#wake?.();
        return;
      }
    }
    // Answered already: the close may be the carrier moving the call. Look now, not at the next tick.
    this.#wake?.();
    const result = await this.outcome;
    if (!result.ok) this.options.endSession('caller_hung_up');
  }

  async #run(): Promise<TransferResult> {
    const { app, carrier, call, action, help, log } = this.options;
    const { store, config } = app.services;
    if (!carrier.warmTransfer) return { ok: false, reason: `warm transfers through ${carrier.name} are not made by this server; use mode: cold` };
    const credentials = await openCarrierCredentials(app.services, call.accountId, carrier.name);
    const calls = credentials ? carrier.calls(credentials as never) : null;
    if (!(calls?.redirect || calls?.redirectToUrl) || !call.carrierCallId) return { ok: false, reason: `the account's ${carrier.name} credentials are missing` };
    this.#calls = calls;
    // The person sees the business's number: the one called for an inbound call, the one calling for an outbound one.
    const businessNumber = call.direction === 'outbound' ? call.fromNumber : call.toNumber;
    if (!businessNumber) return { ok: false, reason: 'the call has no business number to ring the person from' };

    const key = newSessionToken();
    const transfer = await store.warmTransfers.create({
      sessionId: call.id,
      accountId: call.accountId,
      carrier: carrier.name,
      callerCallId: call.carrierCallId,
      target: action.to,
      conference: conferenceName(call.id),
      answerKeyHash: key.hash,
      summary: action.summary ? null : '',
    });
    this.#transfer = transfer;
    if (this.#callerGone) {
      await store.warmTransfers.move(transfer.id, ['dialing'], 'cancelled', 'the caller hung up before the person was called');
      return { ok: false, reason: 'the caller hung up' };
    }
    if (action.summary) {
      void help
        .summary()
        .then((summary) => store.warmTransfers.setSummary(transfer.id, summary))
        .catch((error: unknown) => log.warn({ err: error, session: call.id }, 'could not keep a warm transfer summary'));
    }

    const base = app.services.publicUrl();
    try {
      const { callId } = await calls.placeCall(
        {
          from: businessNumber,
          to: action.to,
          answerUrl: `${base}/telephony/${carrier.name}/warm/answer?key=${key.token}`,
          statusUrl: `${base}/telephony/${carrier.name}/warm/status?transfer=${transfer.id}`,
          machineDetection: false,
        },
        { baseUrl: carrierApiUrl(config, carrier.name), signal: AbortSignal.timeout(20_000), timeoutMs: 8_000, retries: 1 },
      );
      await store.warmTransfers.setLegCallId(transfer.id, callId);
      this.#transfer = { ...transfer, legCallId: callId };
    } catch (error) {
      const reason = `${carrier.name} did not call ${action.to}: ${error instanceof Error ? error.message : String(error)}`;
      await store.warmTransfers.move(transfer.id, ['dialing'], 'failed', reason);
      return { ok: false, reason };
    }
    return this.#waitForThePerson(transfer.id);
  }

  /** Reads the transfer's state until the person is joined or it failed; gives up ringing after the timeout. */
  async #waitForThePerson(id: string): Promise<TransferResult> {
    const { app, action, call } = this.options;
    const { store } = app.services;
    const ringTimeoutMs = this.options.ringTimeoutMs ?? WARM_RING_TIMEOUT_MS;
    const ringDeadline = performance.now() + ringTimeoutMs;
    let joinDeadline: number | null = null;
    for (;;) {
      const current = await store.warmTransfers.get(id);
      if (!current) return { ok: false, reason: 'the transfer was lost' };
      // A callback may have named the leg anew (Plivo: its CallUUID, once it rings).
      if (current.legCallId && this.#transfer) this.#transfer = { ...this.#transfer, legCallId: current.legCallId };
      switch (current.state) {
        case 'joined':
          await store.sessions.setTransferredTo(call.id, action.to);
          return { ok: true };
        case 'failed':
          return { ok: false, reason: current.reason ?? 'failed' };
        case 'cancelled':
          // The person's phone may still ring (the leg placed just as the caller hung up).
          await this.#hangUpLeg();
          return { ok: false, reason: current.reason ?? 'cancelled' };
        case 'answered':
          joinDeadline ??= performance.now() + JOIN_TIMEOUT_MS;
          if (performance.now() > joinDeadline) {
            const reason = 'the person answered, but the caller could not be moved to them';
            if (await store.warmTransfers.move(id, ['answered'], 'failed', reason)) return { ok: false, reason };
          }
          break;
        case 'dialing':
          if (performance.now() > ringDeadline) {
            const reason = `${action.to} did not answer within ${Math.round(ringTimeoutMs / 1000)} s`;
            if (await store.warmTransfers.move(id, ['dialing'], 'failed', reason)) {
              await this.#hangUpLeg();
              return { ok: false, reason };
            }
          }
          break;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.pollMs ?? WARM_POLL_MS);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = null;
    }
  }

  /** The person's phone still rings for nobody: stop it. A leg already over counts as hung up. */
  async #hangUpLeg(): Promise<void> {
    const legCallId = this.#transfer?.legCallId;
    if (!legCallId || !this.#calls) return;
    try {
      await this.#calls.hangUp(legCallId, { baseUrl: carrierApiUrl(this.options.app.services.config, this.options.carrier.name), signal: AbortSignal.timeout(20_000), timeoutMs: 5_000, retries: 2 });
    } catch (error) {
      this.options.log.warn({ err: error, carrier: this.options.carrier.name, session: this.options.call.id }, "could not hang up a warm transfer's ringing leg");
    }
  }
}
