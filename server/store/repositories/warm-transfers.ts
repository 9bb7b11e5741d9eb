// A phone call's warm transfer while it is made: the person's leg dialled through the carrier,
// answered or not. It is kept in the store, not in the memory of the node that holds the caller's
// stream, because the carrier's callbacks for the person's leg (its answer URL, its status) may
// reach any node: whichever node gets one records it here, and the node holding the caller reads
// it. Every change is a move from an expected state, made once: a callback repeated, replayed or
// late finds the transfer moved already and changes nothing.

/**
 * dialing: the person's phone rings (or the carrier is placing the leg).
 * answered: the person picked up and the caller's call is being moved into the conference.
 * joined: both are in the conference; Voxflow has left the call.
 * failed: no answer, busy, the carrier refused, or the caller could not be moved.
 * cancelled: the caller hung up (or the session ended) while the person's phone rang.
 */
export type WarmTransferState = 'dialing' | 'answered' | 'joined' | 'failed' | 'cancelled';

export interface WarmTransfer {
  id: string;
  sessionId: string;
  accountId: string;
  carrier: string;
  /** The caller's call at the carrier: what is moved into the conference. */
  callerCallId: string;
  /** The person: an E.164 number or a SIP address. */
  target: string;
  conference: string;
  /** What the person is told before joining; null while it is being written, '' for none. */
  summary: string | null;
  /** The person's leg at the carrier, once the carrier has placed it. */
  legCallId: string | null;
  state: WarmTransferState;
  /** Why it failed or was cancelled. */
  reason: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface NewWarmTransfer {
  sessionId: string;
  accountId: string;
  carrier: string;
  callerCallId: string;
  target: string;
  conference: string;
  /** The digest of the single-use key in the person's answer URL (the key itself is never stored). */
  answerKeyHash: string;
  summary: string | null;
}

export interface WarmTransfersRepository {
  create(input: NewWarmTransfer): Promise<WarmTransfer>;
  get(id: string): Promise<WarmTransfer | null>;
  /** The transfer whose answer URL carries the key with this digest, in whatever state it is. */
  findByAnswerKey(answerKeyHash: string): Promise<WarmTransfer | null>;
  setLegCallId(id: string, legCallId: string): Promise<void>;
  /** Sets the summary once: a later one (or one after the person heard it) changes nothing. */
  setSummary(id: string, summary: string): Promise<void>;
  /**
   * Moves the transfer to `to` when it is in one of `from`; returns it moved, or null when it was
   * not in any of them (another node, or a callback, moved it first).
   */
  move(id: string, from: readonly WarmTransferState[], to: WarmTransferState, reason?: string | null): Promise<WarmTransfer | null>;
}
