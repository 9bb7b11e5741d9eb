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

/**
 * One field of an account's credentials for a phone carrier (a Twilio auth token, a Telnyx public
 * key…): a secret arrives and leaves sealed (valueEnc), a field that is not secret is kept plain
 * (valuePlain); exactly one of the two is set. One row per field, so a carrier with other fields
 * needs no new columns.
 */
export interface StoredCarrierField {
  carrier: string;
  field: string;
  valueEnc: string | null;
  valuePlain: string | null;
  updatedAt: number;
}

/** A field's new value, sealed or plain; null removes the field. */
export interface CarrierFieldChange {
  carrier: string;
  field: string;
  value: { sealed: string } | { plain: string } | null;
}

export interface ProvidersRepository {
  /** The account's settings, all null when it never saved any. */
  get(accountId: string): Promise<ProviderSettings>;
  update(accountId: string, changes: ProviderSettingsChanges): Promise<ProviderSettings>;
  /** The account's carrier credential fields (of one carrier, when named), by carrier and field; secrets sealed. */
  carrierCredentials(accountId: string, carrier?: string): Promise<StoredCarrierField[]>;
  /** Sets and removes fields in one write; returns every carrier field of the account afterwards. */
  updateCarrierCredentials(accountId: string, changes: readonly CarrierFieldChange[]): Promise<StoredCarrierField[]>;
}
