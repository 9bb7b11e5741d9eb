// Typed errors of the store. Each carries a stable `code` so the API layer can map it to its own
// coded errors (server/errors.ts) without matching on message text.

export type StoreErrorCode =
  | 'store_locked'
  | 'store_corrupt'
  | 'store_failed'
  | 'store_closed'
  | 'store_schema_too_new'
  | 'store_unreachable'
  | 'email_taken'
  | 'idempotency_key_reused'
  | 'session_cap_reached'
  | 'test_run_slot_taken'
  | 'phone_number_taken'
  | 'carrier_call_taken'
  | 'api_key_refused';

export class StoreError extends Error {
  readonly code: StoreErrorCode;

  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Another live process holds the data dir's lockfile. */
export class StoreLockedError extends StoreError {
  readonly dataDir: string;
  readonly pid: number;

  constructor(dataDir: string, pid: number, lockPath: string) {
    super(
      'store_locked',
      `The data dir ${dataDir} is in use by another Voxflow process (pid ${pid}). ` +
        `Stop that process, or delete ${lockPath} if no Voxflow is running.`,
    );
    this.dataDir = dataDir;
    this.pid = pid;
  }
}

/** A file of the data dir is damaged beyond what recovery may silently repair. */
export class StoreCorruptError extends StoreError {
  readonly file: string;

  constructor(file: string, detail: string, options?: { cause?: unknown }) {
    super('store_corrupt', `${file} is damaged: ${detail}. Voxflow will not start on it.`, options);
    this.file = file;
  }
}

/**
 * A journal write or fsync failed. The database stops accepting writes, because its in-memory
 * state may now hold changes that are not on disk. Whether the failed write itself reached the
 * disk is unknown (an fsync error does not say), so a caller must treat it as "maybe applied".
 */
export class StoreFailedError extends StoreError {
  constructor(cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      'store_failed',
      `The store stopped accepting writes after a journal write failed (${reason}). Restart Voxflow.`,
      { cause },
    );
  }
}

export class StoreClosedError extends StoreError {
  constructor() {
    super('store_closed', 'The store is closed.');
  }
}

/** The data dir was written by a newer Voxflow whose schema this build does not know. */
export class StoreSchemaTooNewError extends StoreError {
  constructor(file: string, found: number, known: number) {
    super(
      'store_schema_too_new',
      `${file} has schema version ${found}, but this Voxflow knows only up to ${known}. Upgrade Voxflow.`,
    );
  }
}

/** The PostgreSQL store's server cannot be reached, or what answered is not PostgreSQL. */
export class StoreUnreachableError extends StoreError {
  /** The database URL with its password replaced by ***. */
  readonly url: string;

  constructor(url: string, detail: string, options?: { cause?: unknown }) {
    super('store_unreachable', `Cannot use the PostgreSQL database at ${url}: ${detail}.`, options);
    this.url = url;
  }
}

/**
 * The API key a request presented turned out unknown or revoked when the store checked it with
 * the request's first read (PostgreSQL: docs/hosting.md#several-nodes-on-postgresql); the API
 * answers it as it answers such a key at the door, 401 invalid_credentials.
 */
export class ApiKeyRefusedError extends StoreError {
  constructor() {
    super('api_key_refused', 'The API key is unknown or revoked.');
  }
}

export class EmailTakenError extends StoreError {
  constructor() {
    super('email_taken', 'An account with this email already exists.');
  }
}

/** An idempotency key was used again for a different operation (another account or amount). */
export class IdempotencyKeyReusedError extends StoreError {
  readonly idempotencyKey: string;

  constructor(idempotencyKey: string) {
    super(
      'idempotency_key_reused',
      `The idempotency key ${idempotencyKey} was already used for a different ledger entry.`,
    );
    this.idempotencyKey = idempotencyKey;
  }
}

/**
 * An account already holds as many connected voice sessions as the server allows
 * (VOXFLOW_SESSIONS_PER_ACCOUNT), counted over every node: the API's 429 too_many_sessions.
 */
export class SessionCapReachedError extends StoreError {
  readonly limit: number;

  constructor(limit: number) {
    super('session_cap_reached', `This account already has ${limit} live voice sessions, the most it may hold at once; end one before starting another.`);
    this.limit = limit;
  }
}

/**
 * The account runs as many flow tests as it may at once, on this node or another sharing the
 * database (runs of a gone node do not count).
 */
export class TestRunSlotTakenError extends StoreError {
  readonly limit: number;

  constructor(limit: number) {
    super('test_run_slot_taken', `This account already has ${limit} flow test run${limit === 1 ? '' : 's'} in progress, the most it may have at once; wait for its result first.`);
    this.limit = limit;
  }
}

/** The number is bound already, to this account or another: numbers are unique over the whole server. */
export class PhoneNumberTakenError extends StoreError {
  constructor() {
    super('phone_number_taken', 'This phone number is already bound to a flow on this server.');
  }
}

/**
 * A session of this carrier already holds this call id: a voice webhook the carrier sent again
 * (it retries one it thinks timed out) must find that session, not make a second one.
 */
export class CarrierCallTakenError extends StoreError {
  constructor() {
    super('carrier_call_taken', 'A session already holds this carrier call id.');
  }
}
