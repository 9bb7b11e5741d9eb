// Per-account provider choices and keys. Keys arrive here already encrypted (AES-256-GCM in
// the API layer); the store never sees a key in clear.

export interface ProviderSettings {
  accountId: string;
  sttProvider: string | null;
  sttKeyEnc: string | null;
  ttsProvider: string | null;
  ttsKeyEnc: string | null;
  llmProvider: string | null;
  llmKeyEnc: string | null;
  /** With the account's own key: the endpoint it goes to (null: the vendor's) and the model (null: the default). */
  sttBaseUrl: string | null;
  sttModel: string | null;
  llmBaseUrl: string | null;
  llmModel: string | null;
  ttsBaseUrl: string | null;
  ttsModel: string | null;
  /** Null until the account first saves settings. */
  updatedAt: number | null;
}

/** A field left out is kept; a field set to null is cleared. */
export type ProviderSettingsChanges = Partial<Omit<ProviderSettings, 'accountId' | 'updatedAt'>>;

export interface ProvidersRepository {
  /** The account's settings, all null when it never saved any. */
  get(accountId: string): Promise<ProviderSettings>;
  update(accountId: string, changes: ProviderSettingsChanges): Promise<ProviderSettings>;
}
