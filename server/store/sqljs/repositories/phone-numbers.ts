// The embedded store's (sql.js) phone numbers and do-not-call repositories; their interfaces and
// types are in ../../repositories/phone-numbers.ts and ../../repositories/do-not-call.ts.
import type { Database } from '../database.ts';
import { PhoneNumberTakenError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { DoNotCallRepository } from '../../repositories/do-not-call.ts';
import { numberKey, type PhoneNumber, type PhoneNumbersRepository } from '../../repositories/phone-numbers.ts';
import { toDoNotCallEntry, toPhoneNumber, type DoNotCallRow, type PhoneNumberRow } from '../../rows/phone-numbers.ts';

const COLUMNS = 'id, account_id, carrier, number, flow_id, label, created_at, last_call_at, last_call_status';

export function createPhoneNumbersRepository(db: Database): PhoneNumbersRepository {
  const one = (sql: string, params: Array<string | number>): PhoneNumber | null => {
    const row = db.get<PhoneNumberRow>(sql, params);
    return row ? toPhoneNumber(row) : null;
  };

  return {
    create(input) {
      const { accountId, carrier, flowId, label } = input;
      const number: PhoneNumber = { id: newId(), accountId, carrier, number: input.number, flowId, label, createdAt: db.now(), lastCallAt: null, lastCallStatus: null };
      return db.write((tx) => {
        const inserted = tx.run(
          `INSERT INTO phone_numbers (id, account_id, carrier, number, number_key, flow_id, label, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (number_key) DO NOTHING`,
          [number.id, number.accountId, number.carrier, number.number, numberKey(number.carrier, number.number), number.flowId, number.label, number.createdAt],
        );
        if (inserted !== 1) throw new PhoneNumberTakenError();
        return number;
      });
    },

    async list(accountId) {
      return db.all<PhoneNumberRow>(`SELECT ${COLUMNS} FROM phone_numbers WHERE account_id = ? ORDER BY created_at DESC, rowid DESC`, [accountId]).map(toPhoneNumber);
    },

    get: async (accountId, id) => one(`SELECT ${COLUMNS} FROM phone_numbers WHERE id = ? AND account_id = ?`, [id, accountId]),

    findByCarrierNumber: async (carrier, number) =>
      one(`SELECT ${COLUMNS} FROM phone_numbers WHERE number_key = ? AND carrier = ?`, [numberKey(carrier, number), carrier]),

    delete(accountId, id) {
      return db.write((tx) => tx.run('DELETE FROM phone_numbers WHERE id = ? AND account_id = ?', [id, accountId]) === 1);
    },

    async recordCall(id, at, status) {
      await db.write((tx) => tx.run('UPDATE phone_numbers SET last_call_at = ?, last_call_status = ? WHERE id = ?', [at, status, id]));
    },
  };
}

export function createDoNotCallRepository(db: Database): DoNotCallRepository {
  return {
    add(accountId, number) {
      const now = db.now();
      return db.write((tx) => {
        const created = tx.run('INSERT INTO do_not_call (account_id, number, created_at) VALUES (?, ?, ?) ON CONFLICT (account_id, number) DO NOTHING', [accountId, number, now]) === 1;
        const row = tx.get<DoNotCallRow>('SELECT number, created_at FROM do_not_call WHERE account_id = ? AND number = ?', [accountId, number])!;
        return { created, entry: toDoNotCallEntry(row) };
      });
    },

    async list(accountId) {
      return db.all<DoNotCallRow>('SELECT number, created_at FROM do_not_call WHERE account_id = ? ORDER BY number', [accountId]).map(toDoNotCallEntry);
    },

    remove(accountId, number) {
      return db.write((tx) => tx.run('DELETE FROM do_not_call WHERE account_id = ? AND number = ?', [accountId, number]) === 1);
    },

    async isDoNotCall(accountId, number) {
      return db.get('SELECT 1 FROM do_not_call WHERE account_id = ? AND number = ?', [accountId, number]) !== undefined;
    },
  };
}
