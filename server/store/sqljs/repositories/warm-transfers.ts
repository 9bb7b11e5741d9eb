// The embedded store's (sql.js) warm transfers; the interface is ../../repositories/warm-transfers.ts.
import type { Database } from '../database.ts';
import { newId } from '../../ids.ts';
import type { WarmTransfer, WarmTransfersRepository } from '../../repositories/warm-transfers.ts';
import { toWarmTransfer, WARM_TRANSFER_COLUMNS, type WarmTransferRow } from '../../rows/warm-transfers.ts';

export function createWarmTransfersRepository(db: Database): WarmTransfersRepository {
  const one = (sql: string, params: Array<string | number>): WarmTransfer | null => {
    const row = db.get<WarmTransferRow>(sql, params);
    return row ? toWarmTransfer(row) : null;
  };
  const byId = (id: string) => one(`SELECT ${WARM_TRANSFER_COLUMNS} FROM warm_transfers WHERE id = ?`, [id]);

  return {
    create(input) {
      const now = db.now();
      const transfer: WarmTransfer = {
        id: newId(),
        sessionId: input.sessionId,
        accountId: input.accountId,
        carrier: input.carrier,
        callerCallId: input.callerCallId,
        target: input.target,
        conference: input.conference,
        summary: input.summary,
        legCallId: null,
        state: 'dialing',
        reason: null,
        createdAt: now,
        updatedAt: now,
      };
      return db.write((tx) => {
        tx.run(
          `INSERT INTO warm_transfers (id, session_id, account_id, carrier, caller_call_id, target, conference, answer_key_hash, summary, state, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'dialing', ?, ?)`,
          [transfer.id, transfer.sessionId, transfer.accountId, transfer.carrier, transfer.callerCallId, transfer.target, transfer.conference, input.answerKeyHash, input.summary, now, now],
        );
        return transfer;
      });
    },

    get: async (id) => byId(id),

    findByAnswerKey: async (hash) => one(`SELECT ${WARM_TRANSFER_COLUMNS} FROM warm_transfers WHERE answer_key_hash = ?`, [hash]),

    async setLegCallId(id, legCallId) {
      await db.write((tx) => tx.run('UPDATE warm_transfers SET leg_call_id = ?, updated_at = ? WHERE id = ?', [legCallId, db.now(), id]));
    },

    async setSummary(id, summary) {
      await db.write((tx) => tx.run("UPDATE warm_transfers SET summary = ?, updated_at = ? WHERE id = ? AND summary IS NULL AND state = 'dialing'", [summary, db.now(), id]));
    },

    move(id, from, to, reason = null) {
      const now = db.now();
      return db.write((tx) => {
        const moved = tx.run(`UPDATE warm_transfers SET state = ?, reason = ?, updated_at = ? WHERE id = ? AND state IN (${from.map(() => '?').join(', ')})`, [to, reason, now, id, ...from]);
        return moved === 1 ? byId(id) : null;
      });
    },
  };
}
