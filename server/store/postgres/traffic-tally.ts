// Keeps a flow's pre-counted traffic (../rows/traffic-tally.ts) right as a session changes, in the
// transaction that changes it, as on sql.js (../sqljs/traffic-tally.ts). The session's row is
// locked first (FOR NO KEY UPDATE, as an UPDATE of it would): every write that changes an ended session's counts takes that lock,
// so two of them (on two nodes) never both take out the same counts, and a session's end waits
// for a timeline batch in flight (or the batch for the end) and counts what it left.
import type { PgQueryable } from './database.ts';
import { emptiedDays, emptiedRowsSql, isTallied, tallySql, type TalliedSession } from '../rows/traffic-tally.ts';

export async function retallied<T>(tx: PgQueryable, sessionId: string, change: () => Promise<T>): Promise<T> {
  const before = await tx.row<TalliedSession>('SELECT status, account_id, flow_id, created_at FROM sessions WHERE id = $1 FOR NO KEY UPDATE', [sessionId]);
  if (isTallied(before)) for (const sql of tallySql(-1, 's.id = $1', 'pg')) await tx.run(sql, [sessionId]);
  const result = await change();
  const after = await tx.row<TalliedSession>('SELECT status, account_id, flow_id, created_at FROM sessions WHERE id = $1', [sessionId]);
  if (isTallied(after)) for (const sql of tallySql(1, 's.id = $1', 'pg')) await tx.run(sql, [sessionId]);
  if (isTallied(before)) await tx.run(emptiedRowsSql((n) => `$${n}`), [before.account_id, before.flow_id, ...emptiedDays(before.created_at)]);
  return result;
}

/** Counts in sessions that `ids` names and that just ended (their rows already locked by the ending UPDATE). */
export async function tallyEnded(tx: PgQueryable, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  for (const sql of tallySql(1, 's.id = ANY($1::text[])', 'pg')) await tx.run(sql, [ids]);
}
