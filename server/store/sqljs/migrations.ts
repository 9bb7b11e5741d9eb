// The schema, as numbered scripts applied in order at open. A released migration is never
// edited: a change is a new entry at the end.
//
// Ids are TEXT made in JS and times are REAL Unix seconds passed in as parameters, never SQLite
// defaults such as CURRENT_TIMESTAMP: the journal replays statements, and a statement that
// reads the clock would replay to a different value.
// Over 400 lines: the numbered scripts of the embedded store's whole history, one after another;
// released ones are never edited.

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'accounts, api keys, flows, sessions, credit ledger, provider settings',
    sql: `
      CREATE TABLE accounts (
        id            TEXT PRIMARY KEY,
        email         TEXT NOT NULL UNIQUE COLLATE NOCASE,
        password_hash TEXT NOT NULL,
        created_at    REAL NOT NULL
      );

      CREATE TABLE api_keys (
        id           TEXT PRIMARY KEY,
        account_id   TEXT NOT NULL REFERENCES accounts(id),
        label        TEXT NOT NULL,
        prefix       TEXT NOT NULL,
        key_hash     TEXT NOT NULL UNIQUE,
        created_at   REAL NOT NULL,
        last_used_at REAL,
        revoked_at   REAL
      );
      CREATE INDEX api_keys_by_account ON api_keys(account_id, created_at);

      CREATE TABLE flows (
        id           TEXT PRIMARY KEY,
        account_id   TEXT NOT NULL REFERENCES accounts(id),
        name         TEXT NOT NULL,
        yaml_content TEXT NOT NULL,
        created_at   REAL NOT NULL,
        updated_at   REAL NOT NULL
      );
      CREATE INDEX flows_by_account ON flows(account_id, created_at);

      -- token_hash is NULL for engine-router sessions, which start connected without a token.
      CREATE TABLE sessions (
        id                    TEXT PRIMARY KEY,
        account_id            TEXT NOT NULL REFERENCES accounts(id),
        flow_id               TEXT,
        token_hash            TEXT UNIQUE,
        token_prefix          TEXT,
        transport             TEXT NOT NULL,
        mode                  TEXT NOT NULL,
        context_json          TEXT NOT NULL,
        metadata_json         TEXT NOT NULL,
        status                TEXT NOT NULL CHECK (status IN ('created', 'connected', 'ended')),
        created_at            REAL NOT NULL,
        expires_at            REAL NOT NULL,
        started_at            REAL,
        ended_at              REAL,
        duration_secs         INTEGER,
        end_reason            TEXT,
        credits_charged_cents INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX sessions_by_account ON sessions(account_id, created_at);

      -- Append-only: balance is SUM(delta_cents); a row is never updated or deleted.
      CREATE TABLE credit_ledger (
        seq             INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id      TEXT NOT NULL REFERENCES accounts(id),
        delta_cents     INTEGER NOT NULL,
        reason          TEXT NOT NULL,
        idempotency_key TEXT NOT NULL UNIQUE,
        session_id      TEXT,
        created_at      REAL NOT NULL
      );
      CREATE INDEX credit_ledger_by_account ON credit_ledger(account_id, delta_cents);

      CREATE TABLE provider_settings (
        account_id   TEXT PRIMARY KEY REFERENCES accounts(id),
        stt_provider TEXT,
        stt_key_enc  TEXT,
        tts_provider TEXT,
        tts_key_enc  TEXT,
        llm_provider TEXT,
        llm_key_enc  TEXT,
        updated_at   REAL NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'flow layout: where the studio shows each state',
    // Positions are the designer's, not the flow's: kept beside the YAML, never inside it, so
    // moving a node never rewrites the document or its comments.
    sql: `ALTER TABLE flows ADD COLUMN layout TEXT;`,
  },
  {
    version: 3,
    name: 'sessions remember the API key that started them',
    // Revoking a key also expires the unclaimed session tokens it made (NULL: made by a JWT, by
    // the engine router, or before this migration).
    sql: `ALTER TABLE sessions ADD COLUMN api_key_id TEXT;
          CREATE INDEX sessions_by_api_key ON sessions(api_key_id) WHERE api_key_id IS NOT NULL;`,
  },
  {
    version: 4,
    name: 'session timelines and recordings',
    // A session's protocol events in order (docs/api.md), capped per session: the counters say how
    // many were kept and dropped, so a capped timeline says so. `record` asks for a recording;
    // `recording_file` names it inside the data folder once one exists.
    sql: `CREATE TABLE session_events (
            session_id TEXT NOT NULL,
            seq        INTEGER NOT NULL,
            at         REAL NOT NULL,
            type       TEXT NOT NULL,
            data       TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
          );
          ALTER TABLE sessions ADD COLUMN timeline_events INTEGER NOT NULL DEFAULT 0;
          ALTER TABLE sessions ADD COLUMN timeline_bytes INTEGER NOT NULL DEFAULT 0;
          ALTER TABLE sessions ADD COLUMN timeline_dropped INTEGER NOT NULL DEFAULT 0;
          ALTER TABLE sessions ADD COLUMN record INTEGER NOT NULL DEFAULT 0;
          ALTER TABLE sessions ADD COLUMN recording_file TEXT;
          CREATE INDEX sessions_by_created ON sessions(created_at);`,
  },
  {
    version: 5,
    name: "an account's own endpoint and model for each part",
    // With an own key, where it goes (an OpenAI-compatible server's base URL) and which model it
    // asks for; NULL: the vendor's own endpoint and the default model.
    sql: `ALTER TABLE provider_settings ADD COLUMN stt_base_url TEXT;
          ALTER TABLE provider_settings ADD COLUMN stt_model TEXT;
          ALTER TABLE provider_settings ADD COLUMN llm_base_url TEXT;
          ALTER TABLE provider_settings ADD COLUMN llm_model TEXT;
          ALTER TABLE provider_settings ADD COLUMN tts_base_url TEXT;
          ALTER TABLE provider_settings ADD COLUMN tts_model TEXT;`,
  },
  {
    version: 6,
    name: 'webhook endpoints and their durable outbox',
    // An account's endpoints (the signing secret sealed like provider keys) and one row per event
    // per endpoint: the outbox. The row is written before anything is sent and is the event's
    // webhook-id, so a crash between an end and its delivery loses nothing and a retry is the
    // same message. Each attempt is kept for the deliveries list.
    sql: `CREATE TABLE webhooks (
            id          TEXT PRIMARY KEY,
            account_id  TEXT NOT NULL REFERENCES accounts(id),
            url         TEXT NOT NULL,
            events      TEXT NOT NULL,
            secret_enc  TEXT NOT NULL,
            created_at  REAL NOT NULL,
            deleted_at  REAL
          );
          CREATE INDEX webhooks_by_account ON webhooks(account_id, created_at);
          CREATE TABLE webhook_deliveries (
            id              TEXT PRIMARY KEY,
            webhook_id      TEXT NOT NULL REFERENCES webhooks(id),
            account_id      TEXT NOT NULL,
            session_id      TEXT,
            event_type      TEXT NOT NULL,
            payload         TEXT NOT NULL,
            created_at      REAL NOT NULL,
            status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
            attempts        INTEGER NOT NULL DEFAULT 0,
            next_attempt_at REAL,
            last_attempt_at REAL,
            delivered_at    REAL
          );
          CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);
          CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries(webhook_id, created_at);
          CREATE TABLE webhook_attempts (
            delivery_id  TEXT NOT NULL,
            attempt      INTEGER NOT NULL,
            at           REAL NOT NULL,
            status_code  INTEGER,
            error        TEXT,
            duration_ms  INTEGER NOT NULL,
            PRIMARY KEY (delivery_id, attempt)
          );`,
  },
  {
    version: 7,
    name: 'flow versions, drafts and the published version; sessions say which version they ran',
    // Drafts and versions. A version is immutable once written. flows.yaml_content stays the published
    // version's text, so whatever reads a flow to run it reads what is live. Every flow there
    // was becomes version 1, published, with no draft, dated by its last save (no clock in SQL:
    // the journal replays statements). Its document version is its top-level "version:" line
    // read here as text, a trailing comment dropped and quotes trimmed. A session that ran
    // before versions were kept has no flow_version (null). created_by_kind: 'studio' (a JWT)
    // or 'api_key' (created_by_key names the key); NULL for migrated versions.
    sql: `CREATE TABLE flow_versions (
            flow_id          TEXT NOT NULL,
            number           INTEGER NOT NULL,
            yaml_content     TEXT NOT NULL,
            document_version TEXT,
            note             TEXT NOT NULL DEFAULT '',
            created_at       REAL NOT NULL,
            created_by_kind  TEXT,
            created_by_key   TEXT,
            PRIMARY KEY (flow_id, number)
          );
          CREATE TABLE flow_drafts (
            flow_id      TEXT PRIMARY KEY,
            yaml_content TEXT NOT NULL,
            base_version INTEGER NOT NULL,
            etag         TEXT NOT NULL,
            updated_at   REAL NOT NULL
          );
          ALTER TABLE flows ADD COLUMN published_version INTEGER NOT NULL DEFAULT 1;
          INSERT INTO flow_versions (flow_id, number, yaml_content, document_version, note, created_at)
            SELECT id, 1, yaml_content, NULLIF(TRIM(TRIM(value, ' ' || char(9) || char(13)), '"'''), ''), '', updated_at
            FROM (SELECT id, yaml_content, updated_at, substr(line, 1, instr(line || ' #', ' #') - 1) AS value
                  FROM (SELECT id, yaml_content, updated_at,
                               CASE WHEN at = 0 THEN '' ELSE substr(rest, 1, instr(rest || char(10), char(10)) - 1) END AS line
                        FROM (SELECT id, yaml_content, updated_at, at, substr(yaml_content, at + 8) AS rest
                              FROM (SELECT id, yaml_content, updated_at, instr(char(10) || yaml_content, char(10) || 'version:') AS at FROM flows))));
          ALTER TABLE sessions ADD COLUMN flow_version INTEGER;
          ALTER TABLE sessions ADD COLUMN flow_draft INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    version: 8,
    name: "flow tests and their runs",
    // Flow tests. A test is one YAML document stored with its flow (name copied out for the list).
    // A run is a job: its row is written when it starts and gets its result (the whole report as
    // JSON) when it ends; a row still 'running' that no live job owns was cut by a restart.
    sql: `CREATE TABLE flow_tests (
            id           TEXT PRIMARY KEY,
            account_id   TEXT NOT NULL,
            flow_id      TEXT NOT NULL,
            name         TEXT NOT NULL,
            yaml_content TEXT NOT NULL,
            created_at   REAL NOT NULL,
            updated_at   REAL NOT NULL
          );
          CREATE INDEX flow_tests_by_flow ON flow_tests(flow_id, created_at);
          CREATE TABLE flow_test_runs (
            id           TEXT PRIMARY KEY,
            account_id   TEXT NOT NULL,
            flow_id      TEXT NOT NULL,
            mode         TEXT NOT NULL,
            draft        INTEGER NOT NULL DEFAULT 0,
            flow_version INTEGER,
            test_ids     TEXT NOT NULL,
            status       TEXT NOT NULL CHECK (status IN ('running', 'passed', 'failed', 'error')),
            result_json  TEXT,
            error        TEXT,
            created_at   REAL NOT NULL,
            finished_at  REAL
          );
          CREATE INDEX flow_test_runs_by_flow ON flow_test_runs(flow_id, created_at);`,
  },
  {
    version: 9,
    name: "an account's named secrets, for flow http tools",
    // Account secrets: what an http tool's headers name as {secret.NAME}. Sealed like provider keys
    // (AES-256-GCM, bound to the account and the name); the name is unique per account.
    sql: `CREATE TABLE account_secrets (
            account_id TEXT NOT NULL REFERENCES accounts(id),
            name       TEXT NOT NULL,
            value_enc  TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (account_id, name)
          );`,
  },
  {
    version: 10,
    name: 'the node that holds each voice session, and the nodes alive',
    // Several nodes (docs/hosting.md, repositories/nodes.ts). A session records the node that claimed it or
    // created it connected; on PostgreSQL each node keeps its row in nodes fresh. The partial
    // indexes serve the two questions asked of live sessions: how many an account holds (its
    // cap, at every connect) and which ones a gone node left behind.
    sql: `CREATE TABLE nodes (
            id           TEXT PRIMARY KEY,
            started_at   REAL NOT NULL,
            last_seen_at REAL NOT NULL
          );
          ALTER TABLE sessions ADD COLUMN node_id TEXT;
          CREATE INDEX sessions_live_by_account ON sessions(account_id) WHERE status = 'connected';
          CREATE INDEX sessions_live_by_node ON sessions(node_id) WHERE status = 'connected';`,
  },
  {
    version: 11,
    name: 'phone numbers, carrier credentials, do-not-call lists, and the phone side of sessions',
    // A phone call is a session with a carrier as its transport. number_key is what makes a number
    // unique over the whole server: a real (E.164) number reaches one carrier at a time, so it is
    // the number itself, whatever the carrier; a SIP user part is only unique among SIP numbers
    // ('sip:' + it). Carrier credentials are one row per field, so a carrier with new fields needs
    // no migration: a secret field is sealed (value_enc), a non-secret one kept plain (value_plain).
    // A carrier's call id is unique per carrier: a retried voice webhook cannot make a second session.
    sql: `CREATE TABLE phone_numbers (
            id               TEXT PRIMARY KEY,
            account_id       TEXT NOT NULL REFERENCES accounts(id),
            carrier          TEXT NOT NULL,
            number           TEXT NOT NULL,
            number_key       TEXT NOT NULL,
            flow_id          TEXT NOT NULL,
            label            TEXT NOT NULL DEFAULT '',
            created_at       REAL NOT NULL,
            last_call_at     REAL,
            last_call_status TEXT
          );
          CREATE UNIQUE INDEX phone_numbers_number_key ON phone_numbers(number_key);
          CREATE INDEX phone_numbers_by_account ON phone_numbers(account_id, created_at);
          CREATE TABLE carrier_credentials (
            account_id  TEXT NOT NULL REFERENCES accounts(id),
            carrier     TEXT NOT NULL,
            field       TEXT NOT NULL,
            value_enc   TEXT,
            value_plain TEXT,
            updated_at  REAL NOT NULL,
            PRIMARY KEY (account_id, carrier, field),
            CHECK ((value_enc IS NULL) <> (value_plain IS NULL))
          );
          CREATE TABLE do_not_call (
            account_id TEXT NOT NULL REFERENCES accounts(id),
            number     TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (account_id, number)
          );
          ALTER TABLE sessions ADD COLUMN direction TEXT;
          ALTER TABLE sessions ADD COLUMN from_number TEXT;
          ALTER TABLE sessions ADD COLUMN to_number TEXT;
          ALTER TABLE sessions ADD COLUMN carrier_call_id TEXT;
          ALTER TABLE sessions ADD COLUMN call_status TEXT;
          ALTER TABLE sessions ADD COLUMN transferred_to TEXT;
          CREATE UNIQUE INDEX sessions_by_carrier_call ON sessions(transport, carrier_call_id) WHERE carrier_call_id IS NOT NULL;
          CREATE INDEX sessions_outbound_by_account ON sessions(account_id, created_at) WHERE direction = 'outbound';
          CREATE INDEX sessions_outbound_live ON sessions(account_id) WHERE direction = 'outbound' AND status != 'ended';`,
  },
  {
    version: 12,
    name: "warm transfers: the person's leg of a phone call being handed on",
    // Kept in the store because the carrier's callbacks for the person's leg may reach any node
    // (repositories/warm-transfers.ts). The answer URL's key is kept as its digest only.
    sql: `CREATE TABLE warm_transfers (
            id              TEXT PRIMARY KEY,
            session_id      TEXT NOT NULL,
            account_id      TEXT NOT NULL REFERENCES accounts(id),
            carrier         TEXT NOT NULL,
            caller_call_id  TEXT NOT NULL,
            target          TEXT NOT NULL,
            conference      TEXT NOT NULL,
            answer_key_hash TEXT NOT NULL,
            summary         TEXT,
            leg_call_id     TEXT,
            state           TEXT NOT NULL,
            reason          TEXT,
            created_at      REAL NOT NULL,
            updated_at      REAL NOT NULL
          );
          CREATE UNIQUE INDEX warm_transfers_by_answer_key ON warm_transfers(answer_key_hash);
          CREATE INDEX warm_transfers_by_session ON warm_transfers(session_id);`,
  },
  {
    version: 13,
    name: "phone calls: a carrier's answering-machine verdict that comes apart from the answer",
    // Plivo detects a machine while the call already runs and posts its verdict to any node; the
    // node holding the call's stream reads it here (docs/phone-calls.md, voicemail).
    sql: `ALTER TABLE sessions ADD COLUMN answered_by TEXT;`,
  },
  {
    version: 14,
    name: 'the node that holds each flow test run, so runs in progress are counted over every node',
    sql: `ALTER TABLE flow_test_runs ADD COLUMN node_id TEXT;
          CREATE INDEX flow_test_runs_running_by_account ON flow_test_runs(account_id) WHERE status = 'running';`,
  },
  {
    version: 15,
    name: 'accounts remember when the studio signed out',
    // Access and refresh tokens are stateless JWTs: signing out stores when, and any token issued
    // before it is refused (http/auth.ts, POST /auth/refresh).
    sql: `ALTER TABLE accounts ADD COLUMN signed_out_at REAL;`,
  },
  {
    version: 16,
    name: 'the sessions list filtered by flow',
    // GET /v1/sessions?flow_id=…: the account's sessions of one flow, newest first, without reading
    // its other sessions (the other filters narrow what this or sessions_by_account reads).
    sql: `CREATE INDEX sessions_by_account_flow ON sessions(account_id, flow_id, created_at);`,
  },
  {
    version: 17,
    name: "each ended session's analysis: its outcome and success, and the claim of the node working on it",
    // One row per ended session of a flow (repositories/analyses.ts): 'none' when its flow declares
    // no outcome or success, 'pending' until the analysis is stored, then 'done'. The sessions that
    // ended before this version are 'none': their flows could not declare either.
    sql: `CREATE TABLE session_analyses (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id),
            account_id TEXT NOT NULL,
            state TEXT NOT NULL,
            success TEXT,
            result TEXT,
            claimed_by TEXT,
            claimed_until REAL,
            created_at REAL NOT NULL,
            done_at REAL
          );
          CREATE INDEX session_analyses_pending ON session_analyses(state) WHERE state = 'pending';
          INSERT INTO session_analyses (session_id, account_id, state, created_at)
            SELECT id, account_id, 'none', ended_at FROM sessions WHERE status = 'ended' AND flow_id IS NOT NULL AND ended_at IS NOT NULL;`,
  },
  {
    version: 18,
    name: 'A/B experiments between published versions of a flow, and the arm each session was given',
    // An experiment's arms are JSON ([{version, weight}]): they never change once it is made. A
    // running experiment has stopped_at NULL; at most one per flow (the unique index). Sessions
    // record the experiment and the version (arm) they were given, and its results are counted
    // from them by arm (sessions_by_experiment). An experiment is removed with its flow.
    sql: `CREATE TABLE experiments (
            id          TEXT PRIMARY KEY,
            account_id  TEXT NOT NULL REFERENCES accounts(id),
            flow_id     TEXT NOT NULL,
            name        TEXT NOT NULL,
            arms        TEXT NOT NULL,
            created_at  REAL NOT NULL,
            stopped_at  REAL,
            winner      INTEGER
          );
          CREATE INDEX experiments_by_flow ON experiments(account_id, flow_id, created_at);
          CREATE UNIQUE INDEX experiments_running_by_flow ON experiments(flow_id) WHERE stopped_at IS NULL;
          ALTER TABLE sessions ADD COLUMN experiment_id TEXT;
          ALTER TABLE sessions ADD COLUMN experiment_arm INTEGER;
          CREATE INDEX sessions_by_experiment ON sessions(experiment_id, experiment_arm) WHERE experiment_id IS NOT NULL;`,
  },
  {
    version: 19,
    name: "each session's moves through its flow as rows, for the flow's traffic",
    // repositories/analytics.ts counts where a flow's calls went with GROUP BY over these rows
    // (rows/transitions.ts derives them as a timeline batch is stored) instead of reading every
    // timeline; sessions.last_state is where each call was when it ended. Sessions stored before
    // this version get theirs from their kept timelines, without the tools (not read back here).
    sql: `CREATE TABLE session_transitions (
            session_id  TEXT NOT NULL REFERENCES sessions(id),
            seq         INTEGER NOT NULL,
            at          REAL NOT NULL,
            from_state  TEXT,
            to_state    TEXT NOT NULL,
            tool        TEXT,
            first_visit INTEGER NOT NULL,
            first_take  INTEGER NOT NULL,
            PRIMARY KEY (session_id, seq)
          );
          ALTER TABLE sessions ADD COLUMN last_state TEXT;
          INSERT INTO session_transitions (session_id, seq, at, from_state, to_state, tool, first_visit, first_take)
            SELECT session_id, ROW_NUMBER() OVER (PARTITION BY session_id ORDER BY seq), at, prev, state, NULL,
                   CASE WHEN ROW_NUMBER() OVER (PARTITION BY session_id, state ORDER BY seq) = 1 THEN 1 ELSE 0 END,
                   CASE WHEN ROW_NUMBER() OVER (PARTITION BY session_id, prev, state ORDER BY seq) = 1 THEN 1 ELSE 0 END
            FROM (SELECT session_id, seq, at, state, LAG(state) OVER (PARTITION BY session_id ORDER BY seq) AS prev
                  FROM (SELECT session_id, seq, at, json_extract(data, '$.state') AS state FROM session_events WHERE type = 'flow_state') e
                  WHERE state IS NOT NULL) m
            WHERE prev IS NULL OR prev <> state;
          UPDATE sessions SET last_state = (SELECT t.to_state FROM session_transitions t WHERE t.session_id = sessions.id ORDER BY t.seq DESC LIMIT 1)
            WHERE id IN (SELECT session_id FROM session_transitions);`,
  },
  {
    version: 20,
    name: "a flow's traffic pre-counted per day and per 16 days, so its analytics sum those instead of every session",
    // rows/traffic-tally.ts keeps these rows as sessions end (and as an ended session's moves or
    // analysis change), in the transaction that writes the change; a range's whole days are read
    // from here (span 16: a block of 16 days, day = its first; span 1: one day). The sessions
    // ended before this version are counted in once, below. The partial index reads the calls
    // still connected, which are counted from their own rows.
    sql: `CREATE TABLE flow_traffic_days (
            account_id     TEXT NOT NULL,
            flow_id        TEXT NOT NULL,
            span           INTEGER NOT NULL,
            day            INTEGER NOT NULL,
            flow_version   INTEGER NOT NULL,
            flow_draft     INTEGER NOT NULL,
            experiment_id  TEXT NOT NULL,
            experiment_arm INTEGER NOT NULL,
            success        TEXT NOT NULL,
            kind           TEXT NOT NULL,
            a              TEXT NOT NULL,
            b              TEXT NOT NULL,
            c              TEXT NOT NULL,
            calls          INTEGER NOT NULL,
            times          INTEGER NOT NULL,
            reached        INTEGER NOT NULL,
            PRIMARY KEY (account_id, flow_id, span, day, flow_version, flow_draft, experiment_id, experiment_arm, success, kind, a, b, c)
          );
          CREATE INDEX sessions_live_by_flow ON sessions(account_id, flow_id, created_at) WHERE status = 'connected';
          INSERT INTO flow_traffic_days (account_id, flow_id, span, day, flow_version, flow_draft, experiment_id, experiment_arm, success, kind, a, b, c, calls, times, reached)
            SELECT s.account_id, s.flow_id, 1, CAST(s.created_at / 86400 AS INTEGER), COALESCE(s.flow_version, 0), s.flow_draft, COALESCE(s.experiment_id, ''), COALESCE(s.experiment_arm, 0), COALESCE(a.success, 'none'), 'call', '', '', '', COUNT(*), 0, 0
            FROM sessions s LEFT JOIN session_analyses a ON a.session_id = s.id WHERE s.status = 'ended' AND s.flow_id IS NOT NULL
            GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9;
          INSERT INTO flow_traffic_days (account_id, flow_id, span, day, flow_version, flow_draft, experiment_id, experiment_arm, success, kind, a, b, c, calls, times, reached)
            SELECT s.account_id, s.flow_id, 1, CAST(s.created_at / 86400 AS INTEGER), COALESCE(s.flow_version, 0), s.flow_draft, COALESCE(s.experiment_id, ''), COALESCE(s.experiment_arm, 0), COALESCE(a.success, 'none'), 'move', COALESCE(t.from_state, ''), t.to_state, COALESCE(t.tool, ''), SUM(t.first_take), COUNT(*), SUM(t.first_visit)
            FROM sessions s LEFT JOIN session_analyses a ON a.session_id = s.id JOIN session_transitions t ON t.session_id = s.id WHERE s.status = 'ended' AND s.flow_id IS NOT NULL
            GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13;
          INSERT INTO flow_traffic_days (account_id, flow_id, span, day, flow_version, flow_draft, experiment_id, experiment_arm, success, kind, a, b, c, calls, times, reached)
            SELECT s.account_id, s.flow_id, 1, CAST(s.created_at / 86400 AS INTEGER), COALESCE(s.flow_version, 0), s.flow_draft, COALESCE(s.experiment_id, ''), COALESCE(s.experiment_arm, 0), COALESCE(a.success, 'none'), 'end', COALESCE(s.last_state, ''), COALESCE(s.end_reason, ''), '', COUNT(*), 0, 0
            FROM sessions s LEFT JOIN session_analyses a ON a.session_id = s.id WHERE s.status = 'ended' AND s.flow_id IS NOT NULL
            GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12;
          INSERT INTO flow_traffic_days (account_id, flow_id, span, day, flow_version, flow_draft, experiment_id, experiment_arm, success, kind, a, b, c, calls, times, reached)
            SELECT s.account_id, s.flow_id, 16, (CAST(s.created_at / 86400 AS INTEGER) / 16) * 16, COALESCE(s.flow_version, 0), s.flow_draft, COALESCE(s.experiment_id, ''), COALESCE(s.experiment_arm, 0), COALESCE(a.success, 'none'), 'call', '', '', '', COUNT(*), 0, 0
            FROM sessions s LEFT JOIN session_analyses a ON a.session_id = s.id WHERE s.status = 'ended' AND s.flow_id IS NOT NULL
            GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9;
          INSERT INTO flow_traffic_days (account_id, flow_id, span, day, flow_version, flow_draft, experiment_id, experiment_arm, success, kind, a, b, c, calls, times, reached)
            SELECT s.account_id, s.flow_id, 16, (CAST(s.created_at / 86400 AS INTEGER) / 16) * 16, COALESCE(s.flow_version, 0), s.flow_draft, COALESCE(s.experiment_id, ''), COALESCE(s.experiment_arm, 0), COALESCE(a.success, 'none'), 'move', COALESCE(t.from_state, ''), t.to_state, COALESCE(t.tool, ''), SUM(t.first_take), COUNT(*), SUM(t.first_visit)
            FROM sessions s LEFT JOIN session_analyses a ON a.session_id = s.id JOIN session_transitions t ON t.session_id = s.id WHERE s.status = 'ended' AND s.flow_id IS NOT NULL
            GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13;
          INSERT INTO flow_traffic_days (account_id, flow_id, span, day, flow_version, flow_draft, experiment_id, experiment_arm, success, kind, a, b, c, calls, times, reached)
            SELECT s.account_id, s.flow_id, 16, (CAST(s.created_at / 86400 AS INTEGER) / 16) * 16, COALESCE(s.flow_version, 0), s.flow_draft, COALESCE(s.experiment_id, ''), COALESCE(s.experiment_arm, 0), COALESCE(a.success, 'none'), 'end', COALESCE(s.last_state, ''), COALESCE(s.end_reason, ''), '', COUNT(*), 0, 0
            FROM sessions s LEFT JOIN session_analyses a ON a.session_id = s.id WHERE s.status = 'ended' AND s.flow_id IS NOT NULL
            GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12;`,
  },
];
