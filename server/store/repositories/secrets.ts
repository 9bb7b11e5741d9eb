// An account's named secrets (docs/flows.md): what an http tool's headers name as `{secret.NAME}`.
// Values arrive here sealed (SecretBox, in the API layer) and leave sealed: the store never sees
// a secret in clear, and nothing here can return one to a client.

export interface StoredSecret {
  name: string;
  /** Sealed with the server's secret key, bound to the account and the name. */
  valueEnc: string;
  createdAt: number;
  updatedAt: number;
}

export interface SecretsRepository {
  /** Names and dates, by name; no values. */
  list(accountId: string): Promise<Array<Omit<StoredSecret, 'valueEnc'>>>;
  /** Every secret of the account, sealed: for the engine, which opens only what a call names. */
  sealed(accountId: string): Promise<StoredSecret[]>;
  /** Sets or replaces; returns whether the name was new. */
  put(accountId: string, name: string, valueEnc: string): Promise<{ created: boolean; secret: Omit<StoredSecret, 'valueEnc'> }>;
  /** False when the account had no secret of that name. */
  delete(accountId: string, name: string): Promise<boolean>;
}
