// Phone numbers and do-not-call lists on PostgreSQL: the same behaviour as the sql.js repositories
// (../repositories/phone-numbers.ts, ../repositories/do-not-call.ts). A number is taken by one
// INSERT … ON CONFLICT DO NOTHING on its unique key, so of two nodes binding the same number at
// once exactly one succeeds, whichever accounts ask.
import { PhoneNumberTakenError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { DoNotCallRepository } from '../repositories/do-not-call.ts';
import { numberKey, type PhoneNumber, type PhoneNumbersRepository } from '../repositories/phone-numbers.ts';
import { toDoNotCallEntry, toPhoneNumber, type DoNotCallRow, type PhoneNumberRow } from '../rows/phone-numbers.ts';
import type { PgDatabase } from './database.ts';

const COLUMNS = 'id, account_id, carrier, number, flow_id, label, created_at, last_call_at, last_call_status';

export function createPgPhoneNumbersRepository(db: PgDatabase): PhoneNumbersRepository {
  const one = async (sql: string, params: unknown[]): Promise<PhoneNumber | null> => {
    const row = await db.row<PhoneNumberRow>(sql, params);
    return row ? toPhoneNumber(row) : null;
  };

  return {
    async create(input) {
      const { accountId, carrier, flowId, label } = input;
      const number: PhoneNumber = { id: newId(), accountId, carrier, number: input.number, flowId, label, createdAt: db.now(), lastCallAt: null, lastCallStatus: null };
      const inserted = await db.run(
        `INSERT INTO phone_numbers (id, account_id, carrier, number, number_key, flow_id, label, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (number_key) DO NOTHING`,
        [number.id, number.accountId, number.carrier, number.number, numberKey(number.carrier, number.number), number.flowId, number.label, number.createdAt],
      );
      if (inserted !== 1) throw new PhoneNumberTakenError();
      return number;
    },

    async list(accountId) {
      const rows = await db.rows<PhoneNumberRow>(`SELECT ${COLUMNS} FROM phone_numbers WHERE account_id = $1 ORDER BY created_at DESC, rowid DESC`, [accountId]);
      return rows.map(toPhoneNumber);
    },

    get: (accountId, id) => one(`SELECT ${COLUMNS} FROM phone_numbers WHERE id = $1 AND account_id = $2`, [id, accountId]),

    findByCarrierNumber: (carrier, number) => one(`SELECT ${COLUMNS} FROM phone_numbers WHERE number_key = $1 AND carrier = $2`, [numberKey(carrier, number), carrier]),

    async delete(accountId, id) {
      return (await db.run('DELETE FROM phone_numbers WHERE id = $1 AND account_id = $2', [id, accountId])) === 1;
    },

    async recordCall(id, at, status) {
      await db.run('UPDATE phone_numbers SET last_call_at = $1, last_call_status = $2 WHERE id = $3', [at, status, id]);
    },
  };
}

export function createPgDoNotCallRepository(db: PgDatabase): DoNotCallRepository {
  return {
    async add(accountId, number) {
      // xmax = 0 on a freshly inserted row: the upsert says itself whether it inserted.
      const row = await db.row<DoNotCallRow & { inserted: boolean }>(
        `INSERT INTO do_not_call (account_id, number, created_at) VALUES ($1, $2, $3)
         ON CONFLICT (account_id, number) DO UPDATE SET number = excluded.number
         RETURNING number, created_at, (xmax = 0) AS inserted`,
        [accountId, number, db.now()],
      );
      return { created: row!.inserted, entry: toDoNotCallEntry(row!) };
    },

    async list(accountId) {
      const rows = await db.rows<DoNotCallRow>('SELECT number, created_at FROM do_not_call WHERE account_id = $1 ORDER BY number COLLATE "C"', [accountId]);
      return rows.map(toDoNotCallEntry);
    },

    async remove(accountId, number) {
      return (await db.run('DELETE FROM do_not_call WHERE account_id = $1 AND number = $2', [accountId, number])) === 1;
    },

    async isDoNotCall(accountId, number) {
      return (await db.row('SELECT 1 FROM do_not_call WHERE account_id = $1 AND number = $2', [accountId, number])) !== null;
    },
  };
}
