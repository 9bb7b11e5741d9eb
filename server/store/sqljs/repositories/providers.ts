// The embedded store's (sql.js) providers repository; its interface and types are in ../../repositories/providers.ts.
import type { Database } from '../database.ts';
import type { ProviderSettings, ProviderSettingsChanges, ProvidersRepository } from '../../repositories/providers.ts';
import type { CarrierFieldRow, ProviderSettingsRow } from '../../rows/providers.ts';
import { COLUMNS, emptySettings, toCarrierField, toProviderSettings } from '../../rows/providers.ts';

export function createProvidersRepository(db: Database): ProvidersRepository {
  const get = (accountId: string): ProviderSettings => {
    const row = db.get<ProviderSettingsRow>('SELECT * FROM provider_settings WHERE account_id = ?', [accountId]);
    return row ? toProviderSettings(row) : emptySettings(accountId);
  };
  const carrierFields = (accountId: string, carrier?: string) =>
    db
      .all<CarrierFieldRow>(
        `SELECT carrier, field, value_enc, value_plain, updated_at FROM carrier_credentials
         WHERE account_id = ?${carrier === undefined ? '' : ' AND carrier = ?'} ORDER BY carrier, field`,
        carrier === undefined ? [accountId] : [accountId, carrier],
      )
      .map(toCarrierField);

  return {
    get: async (accountId) => get(accountId),

    update(accountId, changes) {
      const columns: string[] = [];
      const values: (string | null)[] = [];
      for (const [field, column] of Object.entries(COLUMNS) as [keyof ProviderSettingsChanges, string][]) {
        const value = changes[field];
        if (value === undefined) continue;
        columns.push(column);
        values.push(value);
      }
      const updatedAt = db.now();
      const assignments = [...columns, 'updated_at'].map((column) => `${column} = excluded.${column}`).join(', ');
      return db.write((tx) => {
        tx.run(
          `INSERT INTO provider_settings (account_id, ${[...columns, 'updated_at'].join(', ')})
           VALUES (?, ${[...values, updatedAt].map(() => '?').join(', ')})
           ON CONFLICT (account_id) DO UPDATE SET ${assignments}`,
          [accountId, ...values, updatedAt],
        );
        return get(accountId);
      });
    },

    carrierCredentials: async (accountId, carrier) => carrierFields(accountId, carrier),

    updateCarrierCredentials(accountId, changes) {
      const now = db.now();
      return db.write((tx) => {
        for (const { carrier, field, value } of changes) {
          if (value === null) {
            tx.run('DELETE FROM carrier_credentials WHERE account_id = ? AND carrier = ? AND field = ?', [accountId, carrier, field]);
            continue;
          }
          tx.run(
            `INSERT INTO carrier_credentials (account_id, carrier, field, value_enc, value_plain, updated_at) VALUES (?, ?, ?, ?, ?, ?)
             ON CONFLICT (account_id, carrier, field) DO UPDATE
               SET value_enc = excluded.value_enc, value_plain = excluded.value_plain, updated_at = excluded.updated_at`,
            [accountId, carrier, field, 'sealed' in value ? value.sealed : null, 'plain' in value ? value.plain : null, now],
          );
        }
        return carrierFields(accountId);
      });
    },
  };
}

