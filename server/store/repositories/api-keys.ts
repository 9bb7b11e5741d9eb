
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
  /**
   * Only where the store keeps the keys it looked up in this process, cleared by every write to
   * keys (the embedded store: its one process is the only writer): what findActiveByHash would
   * answer now, or undefined when the store must be asked. Without a promise, so that a request
   * whose key is kept is authenticated without a turn of the microtask queue. Not for changing.
   */
  findActiveByHashKept?(keyHash: string): Readonly<ApiKey> | null | undefined;
  /**
   * Only where a key lookup is a round trip of its own (PostgreSQL): for a key this process has
   * found active before, whose it is (a key's id and account never change) with a check that
   * rides on the request's first read, so the request makes one round trip where it made two.
   * Null for a key not seen yet: then findActiveByHash. Whether the key is still active is never
   * remembered, only asked.
   */
  checkWithFirstRead?(keyHash: string): { key: Pick<ApiKey, 'id' | 'accountId'>; check: KeyCheckWithFirstRead } | null;
  /** False when the key is unknown, another account's, or already revoked. */
  revoke(accountId: string, id: string): Promise<boolean>;
  /**
   * Records a use at `now`, at most once a minute per key: true when it wrote. Every write
   * waits for an fsync, and one per authenticated request would put that on every GET.
   */
  touch(id: string, now: number): Promise<boolean>;
}

export const TOUCH_INTERVAL_SECS = 60;

/** A key check not yet made: the store makes it with the first read sent inside `run`. */
export interface KeyCheckWithFirstRead {
  /** Resolves once the key is known active; rejects with ApiKeyRefusedError when it is unknown or revoked. */
  confirm(): Promise<void>;
  /** Runs `fn` so that the store's statements it sends (and what it starts) carry this check. */
  run<T>(fn: () => T): T;
}
