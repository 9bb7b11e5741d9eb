// Warm transfers on PostgreSQL: the same behaviour as the sql.js repository
// (../repositories/warm-transfers.ts). A move is one conditional UPDATE, so two nodes acting on
// the same transfer at once (a status callback here, the ring timeout there) cannot both move it.
import { newId } from '../ids.ts';
import type { WarmTransfersRepository } from '../repositories/warm-transfers.ts';
import { toWarmTransfer, WARM_TRANSFER_COLUMNS, type WarmTransferRow } from '../rows/warm-transfers.ts';
import type { PgDatabase } from './database.ts';

export function createPgWarmTransfersRepository(db: PgDatabase): WarmTransfersRepository {
  return {
    async create(input) {
      const now = db.now();
      const row = await db.row<WarmTransferRow>(
        `INSERT INTO warm_transfers (id, session_id, account_id, carrier, caller_call_id, target, conference, answer_key_hash, summary, state, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'dialing', $10, $10)
         RETURNING ${WARM_TRANSFER_COLUMNS}`,
        [newId(), input.sessionId, input.accountId, input.carrier, input.callerCallId, input.target, input.conference, input.answerKeyHash, input.summary, now],
      );
      return toWarmTransfer(row!);
    },

    async get(id) {
      const row = await db.row<WarmTransferRow>(`SELECT ${WARM_TRANSFER_COLUMNS} FROM warm_transfers WHERE id = $1`, [id]);
      return row ? toWarmTransfer(row) : null;
    },

    async findByAnswerKey(hash) {
      const row = await db.row<WarmTransferRow>(`SELECT ${WARM_TRANSFER_COLUMNS} FROM warm_transfers WHERE answer_key_hash = $1`, [hash]);
      return row ? toWarmTransfer(row) : null;
    },

    async setLegCallId(id, legCallId) {
      await db.run('UPDATE warm_transfers SET leg_call_id = $1, updated_at = $2 WHERE id = $3', [legCallId, db.now(), id]);
    },

    async setSummary(id, summary) {
      await db.run("UPDATE warm_transfers SET summary = $1, updated_at = $2 WHERE id = $3 AND summary IS NULL AND state = 'dialing'", [summary, db.now(), id]);
    },

    async move(id, from, to, reason = null) {
      const row = await db.row<WarmTransferRow>(
        `UPDATE warm_transfers SET state = $1, reason = $2, updated_at = $3 WHERE id = $4 AND state = ANY($5::text[]) RETURNING ${WARM_TRANSFER_COLUMNS}`,
        [to, reason, db.now(), id, [...from]],
      );
      return row ? toWarmTransfer(row) : null;
    },
  };
}
