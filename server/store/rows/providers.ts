// The providers tables' rows as both stores read them (sql.js and PostgreSQL share the schema), and
// how a row becomes the repository's object.
import type { ProviderSettings, ProviderSettingsChanges, StoredCarrierField } from '../repositories/providers.ts';

// The only column names that ever reach SQL text; keys of `changes` are matched against it.

export const COLUMNS = {
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

export interface ProviderSettingsRow {
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

export function emptySettings(accountId: string): ProviderSettings {
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

export function toProviderSettings(row: ProviderSettingsRow): ProviderSettings {
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

export interface CarrierFieldRow {
  carrier: string;
  field: string;
  value_enc: string | null;
  value_plain: string | null;
  updated_at: number;
}

export function toCarrierField(row: CarrierFieldRow): StoredCarrierField {
  return { carrier: row.carrier, field: row.field, valueEnc: row.value_enc, valuePlain: row.value_plain, updatedAt: row.updated_at };
}
