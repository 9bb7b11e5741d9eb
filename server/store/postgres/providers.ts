// Provider settings on PostgreSQL: the same behaviour as the sql.js repository
// (../repositories/providers.ts). An update is one upsert that returns the row it left, so two
// nodes saving different fields at once each keep the other's (a field left out is not written).

import type { ProviderSettingsChanges, ProvidersRepository } from '../repositories/providers.ts';
import { prepared, type PgDatabase, type PgQueryable } from './database.ts';
import type { CarrierFieldRow, ProviderSettingsRow } from '../rows/providers.ts';
import { COLUMNS, emptySettings, toCarrierField, toProviderSettings } from '../rows/providers.ts';

/** Read by every POST /v1/sessions: prepared once per connection. */
const GET_SETTINGS = prepared('SELECT * FROM provider_settings WHERE account_id = $1');

export function createPgProvidersRepository(db: PgDatabase): ProvidersRepository {
  const carrierFields = async (q: PgQueryable, accountId: string, carrier?: string) =>
    (
      await q.rows<CarrierFieldRow>(
        // COLLATE "C": byte order, as SQLite's BINARY orders them.
        `SELECT carrier, field, value_enc, value_plain, updated_at FROM carrier_credentials
         WHERE account_id = $1${carrier === undefined ? '' : ' AND carrier = $2'} ORDER BY carrier COLLATE "C", field COLLATE "C"`,
        carrier === undefined ? [accountId] : [accountId, carrier],
      )
    ).map(toCarrierField);

  return {
    async get(accountId) {
      const row = await db.row<ProviderSettingsRow>(GET_SETTINGS, [accountId]);
      return row ? toProviderSettings(row) : emptySettings(accountId);
    },

    async update(accountId, changes) {
      const columns: string[] = [];
      const values: (string | null)[] = [];
      for (const [field, column] of Object.entries(COLUMNS) as [keyof ProviderSettingsChanges, string][]) {
        const value = changes[field];
        if (value === undefined) continue;
        columns.push(column);
        values.push(value);
      }
      const updatedAt = db.now();
      const all = [...columns, 'updated_at'];
      const row = await db.row<ProviderSettingsRow>(
        `INSERT INTO provider_settings (account_id, ${all.join(', ')})
         VALUES ($1, ${all.map((_, i) => `$${i + 2}`).join(', ')})
         ON CONFLICT (account_id) DO UPDATE SET ${all.map((column) => `${column} = excluded.${column}`).join(', ')}
         RETURNING *`,
        [accountId, ...values, updatedAt],
      );
      return row ? toProviderSettings(row) : emptySettings(accountId);
    },

    carrierCredentials: (accountId, carrier) => carrierFields(db, accountId, carrier),

    async updateCarrierCredentials(accountId, changes) {
      const now = db.now();
      return db.transaction(async (tx) => {
        for (const { carrier, field, value } of changes) {
          if (value === null) {
            await tx.run('DELETE FROM carrier_credentials WHERE account_id = $1 AND carrier = $2 AND field = $3', [accountId, carrier, field]);
            continue;
          }
          await tx.run(
            `INSERT INTO carrier_credentials (account_id, carrier, field, value_enc, value_plain, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (account_id, carrier, field) DO UPDATE
               SET value_enc = excluded.value_enc, value_plain = excluded.value_plain, updated_at = excluded.updated_at`,
            [accountId, carrier, field, 'sealed' in value ? value.sealed : null, 'plain' in value ? value.plain : null, now],
          );
        }
        return carrierFields(tx, accountId);
      });
    },
  };
}

