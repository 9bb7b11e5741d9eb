// The warm_transfers table's rows as both stores read them, and how a row becomes the repository's object.
import type { WarmTransfer, WarmTransferState } from '../repositories/warm-transfers.ts';

export interface WarmTransferRow {
  id: string;
  session_id: string;
  account_id: string;
  carrier: string;
  caller_call_id: string;
  target: string;
  conference: string;
  summary: string | null;
  leg_call_id: string | null;
  state: string;
  reason: string | null;
  created_at: number;
  updated_at: number;
}

export const WARM_TRANSFER_COLUMNS = 'id, session_id, account_id, carrier, caller_call_id, target, conference, summary, leg_call_id, state, reason, created_at, updated_at';

export function toWarmTransfer(row: WarmTransferRow): WarmTransfer {
  return {
    id: row.id,
    sessionId: row.session_id,
    accountId: row.account_id,
    carrier: row.carrier,
    callerCallId: row.caller_call_id,
    target: row.target,
    conference: row.conference,
    summary: row.summary,
    legCallId: row.leg_call_id,
    state: row.state as WarmTransferState,
    reason: row.reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
