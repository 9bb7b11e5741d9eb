// Provider settings on PostgreSQL: the same behaviour as the sql.js repository
// (../repositories/providers.ts). An update is one upsert that returns the row it left, so two
// nodes saving different fields at once each keep the other's (a field left out is not written).

import type { ProviderSettingsChanges, ProvidersRepository } from '../repositories/providers.ts';
import type { PgDatabase } from './database.ts';
import type { ProviderSettingsRow } from '../rows/providers.ts';
import { COLUMNS, emptySettings, toProviderSettings } from '../rows/providers.ts';

export function createPgProvidersRepository(db: PgDatabase): ProvidersRepository {
  return {
    async get(accountId) {
      const row = await db.row<ProviderSettingsRow>('SELECT * FROM provider_settings WHERE account_id = $1', [accountId]);
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
  };
}

