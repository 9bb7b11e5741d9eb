
export interface ApiKey {
  id: string;
  accountId: string;
  label: string;
  /** The key's first characters, shown in lists so a user can tell keys apart. */
  prefix: string;
  /** SHA-256 of the key; the key itself is never stored. */
  keyHash: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export interface NewApiKey {
  accountId: string;
  label: string;
  prefix: string;
  keyHash: string;
}

export interface ApiKeysRepository {
  create(input: NewApiKey): Promise<ApiKey>;
  /** Newest first; revoked keys are left out. */
  listByAccount(accountId: string): Promise<ApiKey[]>;
  findActiveByHash(keyHash: string): Promise<ApiKey | null>;
  /** False when the key is unknown, another account's, or already revoked. */
  revoke(accountId: string, id: string): Promise<boolean>;
  /**
   * Records a use at `now`, at most once a minute per key: true when it wrote. Every write
   * waits for an fsync, and one per authenticated request would put that on every GET.
   */
  touch(id: string, now: number): Promise<boolean>;
}

export const TOUCH_INTERVAL_SECS = 60;
