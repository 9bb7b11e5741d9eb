// Provider settings on PostgreSQL: the same behaviour as the sql.js repository
// (../repositories/providers.ts). An update is one upsert that returns the row it left, so two
// nodes saving different fields at once each keep the other's (a field left out is not written).

import type { ProviderSettings, ProviderSettingsChanges, ProvidersRepository } from '../repositories/providers.ts';
import type { PgDatabase } from './database.ts';

// The only column names that ever reach SQL text; keys of `changes` are matched against it.
const COLUMNS = {
  sttProvider: 'stt_provider',
  sttKeyEnc: 'stt_key_enc',
  ttsProvider: 'tts_provider',
  ttsKeyEnc: 'tts_key_enc',
  llmProvider: 'llm_provider',
  llmKeyEnc: 'llm_key_enc',
  sttBaseUrl: 'stt_base_url',
  sttModel: 'stt_model',
  llmBaseUrl: 'llm_base_url',
  llmModel: 'llm_model',
  ttsBaseUrl: 'tts_base_url',
  ttsModel: 'tts_model',
} as const satisfies Record<keyof ProviderSettingsChanges, string>;

interface ProviderSettingsRow {
  account_id: string;
  stt_provider: string | null;
  stt_key_enc: string | null;
  tts_provider: string | null;
  tts_key_enc: string | null;
  llm_provider: string | null;
  llm_key_enc: string | null;
  stt_base_url: string | null;
  stt_model: string | null;
  llm_base_url: string | null;
  llm_model: string | null;
  tts_base_url: string | null;
  tts_model: string | null;
  updated_at: number;
}

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

function emptySettings(accountId: string): ProviderSettings {
  return {
    accountId,
    sttProvider: null,
    sttKeyEnc: null,
    ttsProvider: null,
    ttsKeyEnc: null,
    llmProvider: null,
    llmKeyEnc: null,
    sttBaseUrl: null,
    sttModel: null,
    llmBaseUrl: null,
    llmModel: null,
    ttsBaseUrl: null,
    ttsModel: null,
    updatedAt: null,
  };
}

function toProviderSettings(row: ProviderSettingsRow): ProviderSettings {
  return {
    accountId: row.account_id,
    sttProvider: row.stt_provider,
    sttKeyEnc: row.stt_key_enc,
    ttsProvider: row.tts_provider,
    ttsKeyEnc: row.tts_key_enc,
    llmProvider: row.llm_provider,
    llmKeyEnc: row.llm_key_enc,
    sttBaseUrl: row.stt_base_url,
    sttModel: row.stt_model,
    llmBaseUrl: row.llm_base_url,
    llmModel: row.llm_model,
    ttsBaseUrl: row.tts_base_url,
    ttsModel: row.tts_model,
    updatedAt: row.updated_at,
  };
}
