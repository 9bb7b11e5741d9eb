// The embedded store's (sql.js) providers repository; its interface and types are in ../../repositories/providers.ts.
import type { Database } from '../database.ts';
import type { ProviderSettings, ProviderSettingsChanges, ProvidersRepository } from '../../repositories/providers.ts';
import type { ProviderSettingsRow } from '../../rows/providers.ts';
import { COLUMNS, emptySettings, toProviderSettings } from '../../rows/providers.ts';

export function createProvidersRepository(db: Database): ProvidersRepository {
  const get = (accountId: string): ProviderSettings => {
    const row = db.get<ProviderSettingsRow>('SELECT * FROM provider_settings WHERE account_id = ?', [accountId]);
    return row ? toProviderSettings(row) : emptySettings(accountId);
  };

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
  };
}

