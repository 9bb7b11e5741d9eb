// Keeps a flow's pre-counted traffic (../rows/traffic-tally.ts) right as a session changes, in the
// write transaction that changes it: an ended session's counts are taken out before the change
// and put back after it; a session that ends in `change` is counted in.
import type { WriteTransaction } from './write-transaction.ts';
import { emptiedDays, emptiedRowsSql, isTallied, tallySql, type TalliedSession } from '../rows/traffic-tally.ts';

const SESSION = 'SELECT status, account_id, flow_id, created_at FROM sessions WHERE id = ?';

export function retallied<T>(tx: WriteTransaction, sessionId: string, change: () => T): T {
  const before = tx.get<TalliedSession>(SESSION, [sessionId]);
  if (isTallied(before)) for (const sql of tallySql(-1, 's.id = ?', 'sqlite')) tx.run(sql, [sessionId]);
  const result = change();
  const after = tx.get<TalliedSession>(SESSION, [sessionId]);
  if (isTallied(after)) for (const sql of tallySql(1, 's.id = ?', 'sqlite')) tx.run(sql, [sessionId]);
  if (isTallied(before)) tx.run(emptiedRowsSql(() => '?'), [before.account_id, before.flow_id, ...emptiedDays(before.created_at)]);
  return result;
}
