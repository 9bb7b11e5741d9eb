// `voxflow migrate-store --from DATA_DIR --to postgres://…`: moves a server from the embedded store
// to PostgreSQL (docs/hosting.md#moving-from-the-embedded-store-to-postgresql). The copy itself is
// store/copy-to-postgres.ts; this file is the command around it: flags, keys, the lock of the data
// dir, the report and the exit code (0 copied and verified, 1 refused or not matching, 2 a usage
// error). It composes the layers that know what each sealed column is sealed for (billing's
// provider keys, outcomes' webhook secrets, the store's account secrets), which the store layer may
// not import.
//
// Decisions where the issue was silent:
// - No --force: the target must be empty. Merging two servers' data (two accounts with one
//   email, two ledgers) has no right answer, and overwriting a database is what DROP is for.
// - The source key comes from a file (--from-secret-key-file), never a flag's value: secrets are
//   never flags here, since the process list shows them. Without it: DATA_DIR/secret.key, and
//   without that the target's own VOXFLOW_SECRET_KEY (a data dir served with that variable set).
// - Opening the data dir takes its lock (refused while a server runs on it) and migrates it to
//   this Voxflow's schema, as starting a server on it would; opening the database creates the
//   schema, as a node does. Only then are rows copied, in one transaction.
import { access, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { keyContext } from './billing/provider-choice.ts';
import { ConfigError, parseCommandLine } from './config.ts';
import { webhookSecretContext } from './outcomes/webhooks/events.ts';
import { PROVIDER_KINDS } from './providers/catalog.ts';
import { decodeConfiguredKey } from './security/key-files.ts';
import { SecretBox } from './security/secret-box.ts';
import { CopyRefusedError, copyEmbeddedToPostgres, type CopyReport, type SealedColumn } from './store/copy-to-postgres.ts';
import { JOURNAL_FILE, SNAPSHOT_FILE, openDatabase, type Database } from './store/sqljs/database.ts';
import { openPostgres, redactDatabaseUrl, type PgDatabase } from './store/postgres/database.ts';
import { secretContext } from './security/secret-box.ts';
import { carrierCredentialContext } from './security/carrier-credentials.ts';
import { StoreError } from './store/store.ts';
import { UsageError } from './cli-args.ts';

export const MIGRATE_USAGE = `Usage: voxflow migrate-store --from DATA_DIR --to postgres://USER@HOST:PORT/DATABASE [options]

Copies everything an embedded data dir holds into an EMPTY PostgreSQL database, in one
transaction: accounts, API keys, flows with every version, draft and layout, flow tests and
runs, sessions with their timelines, the credit ledger, provider settings, secrets, webhooks and
their deliveries. Ids, times and ledger idempotency keys are kept exactly. Sealed values (provider
keys, webhook signing secrets, account secrets) are sealed again when the target's key differs.
Then it checks every table's row count and every account's balance against the data dir; on a
mismatch the copy is rolled back.

Stop the server first: a data dir in use by a running Voxflow is refused. A database that already
holds rows is refused (there is no --force: create a new database). Exits 0 when copied and
verified, 1 when refused or not matching (nothing is left in the target), 2 on a usage error.

Options:
  --from DATA_DIR               the data dir the embedded server used (its --data-dir)
  --to URL                      the PostgreSQL database (default: VOXFLOW_DATABASE_URL); give
                                its password in PGPASSWORD or ~/.pgpass, not in the URL
  --from-secret-key-file FILE   the key the data dir's secrets are sealed with, base64 in a file
                                (default: DATA_DIR/secret.key, else VOXFLOW_SECRET_KEY)
  --help                        this text
Environment:
  VOXFLOW_SECRET_KEY   required: the key the PostgreSQL nodes will run with (base64, 32 bytes);
                       set it to the contents of DATA_DIR/secret.key to keep sealed values as they are
`;

export interface MigrateCommandIo {
  stdout(text: string): Promise<void> | void;
  stderr(text: string): Promise<void> | void;
}


interface MigrateArgs {
  from: string;
  to: string;
  fromKeyFile: string | null;
  help: boolean;
}

function parseMigrateArgs(argv: readonly string[], env: NodeJS.ProcessEnv): MigrateArgs {
  const out: MigrateArgs = { from: '', to: '', fromKeyFile: null, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const [flag, inline] = eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--help':
      case '-h':
        out.help = true;
        break;
      case '--from':
        out.from = value();
        break;
      case '--to':
        out.to = value();
        break;
      case '--from-secret-key-file':
        out.fromKeyFile = value();
        break;
      case '--from-secret-key':
        throw new UsageError('a key is never given as a flag (the process list would show it): put it in a file and pass --from-secret-key-file FILE');
      default:
        throw new UsageError(`unknown ${arg.startsWith('-') ? 'option' : 'argument'} ${arg}`);
    }
  }
  if (out.help) return out;
  if (!out.from) throw new UsageError('--from DATA_DIR is required');
  out.to ||= env.VOXFLOW_DATABASE_URL?.trim() ?? '';
  if (!out.to) throw new UsageError('--to postgres://… is required (or VOXFLOW_DATABASE_URL)');
  if (!/^postgres(ql)?:\/\//.test(out.to)) throw new UsageError('--to must be a postgres:// or postgresql:// URL');
  return out;
}

/** Every column the schema seals, with the context it was sealed for (the same functions that seal and open it). */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  ...PROVIDER_KINDS.map((kind) => ({
    table: 'provider_settings',
    column: `${kind}_key_enc`,
    context: (row: Record<string, unknown>) => keyContext(String(row.account_id), kind),
  })),
  { table: 'webhooks', column: 'secret_enc', context: (row) => webhookSecretContext(String(row.id)) },
  { table: 'account_secrets', column: 'value_enc', context: (row) => secretContext(String(row.account_id), String(row.name)) },
  { table: 'carrier_credentials', column: 'value_enc', context: (row) => carrierCredentialContext(String(row.account_id), String(row.carrier), String(row.field)) },
];

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

async function readKeyFile(path: string, what: string): Promise<Buffer> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new UsageError(`${what} ${path} does not hold a 32-byte key in base64`);
  return key;
}

/** Runs the command; resolves with its exit code. */
export async function runMigrateStoreCommand(argv: readonly string[], env: NodeJS.ProcessEnv, io: MigrateCommandIo): Promise<number> {
  let args: MigrateArgs;
  let targetKey: Buffer;
  let sourceKey: Buffer;
  let sourceKeyFrom: string;
  try {
    args = parseMigrateArgs(argv, env);
    if (args.help) {
      await io.stdout(MIGRATE_USAGE);
      return 0;
    }
    const configured = parseCommandLine([], env).config.secretKey;
    if (!configured?.trim()) {
      throw new UsageError('VOXFLOW_SECRET_KEY is required: the key the PostgreSQL nodes will run with (every node refuses to start on PostgreSQL without it)');
    }
    try {
      targetKey = decodeConfiguredKey(configured.trim());
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const dataDir = resolve(args.from);
    if (!(await exists(join(dataDir, SNAPSHOT_FILE))) && !(await exists(join(dataDir, JOURNAL_FILE)))) {
      throw new UsageError(`${dataDir} holds no Voxflow data (no ${SNAPSHOT_FILE} or ${JOURNAL_FILE}): give the data dir the server ran with`);
    }
    args.from = dataDir;
    if (args.fromKeyFile) {
      sourceKey = await readKeyFile(resolve(args.fromKeyFile), 'the key file');
      sourceKeyFrom = resolve(args.fromKeyFile);
    } else if (await exists(join(dataDir, 'secret.key'))) {
      sourceKey = await readKeyFile(join(dataDir, 'secret.key'), 'the data dir key');
      sourceKeyFrom = join(dataDir, 'secret.key');
    } else {
      sourceKey = targetKey;
      sourceKeyFrom = 'VOXFLOW_SECRET_KEY (the data dir has no secret.key)';
    }
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) {
      await io.stderr(`voxflow migrate-store: ${error.message}\n\n${MIGRATE_USAGE}`);
      return 2;
    }
    throw error;
  }

  const shownUrl = redactDatabaseUrl(args.to);
  let source: Database | undefined;
  let target: PgDatabase | undefined;
  try {
    source = await openDatabase({ dataDir: args.from });
    target = await openPostgres({ url: args.to, poolSize: 2 });
    await io.stdout(`Copying ${args.from} into ${shownUrl} (sealed values opened with ${sourceKeyFrom})\n`);
    let lastTable = '';
    const report = await copyEmbeddedToPostgres({
      source,
      target,
      sourceBox: new SecretBox(sourceKey),
      targetBox: new SecretBox(targetKey),
      keysDiffer: !sourceKey.equals(targetKey),
      sealed: SEALED_COLUMNS,
      onProgress: (table, copied, total) => {
        // One line per large table, so a long copy shows it is moving.
        if (total >= 10_000 && (table !== lastTable || copied === total)) {
          lastTable = table;
          void io.stdout(`  ${table}: ${copied} of ${total}\n`);
        }
      },
    });
    await io.stdout(formatReport(report));
    return 0;
  } catch (error) {
    if (error instanceof CopyRefusedError) {
      if (error.report) await io.stdout(formatReport(error.report));
      await io.stderr(`voxflow migrate-store: ${error.message}. Nothing was written to ${shownUrl}.\n`);
      return 1;
    }
    if (error instanceof StoreError) {
      await io.stderr(`voxflow migrate-store: ${error.message}\n`);
      return 1;
    }
    // pg's own errors (a constraint the data dir's rows break, say) carry no password: the URL is not in them.
    await io.stderr(`voxflow migrate-store: the copy failed and was rolled back, nothing was written to ${shownUrl}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await target?.close().catch(() => undefined);
    await source?.close().catch(() => undefined);
  }
}

function formatReport(report: CopyReport): string {
  const width = Math.max(...report.tables.map((t) => t.table.length), 5);
  const lines = report.tables.map((t) => `  ${t.table.padEnd(width)}  ${String(t.source).padStart(8)}  ${String(t.target).padStart(8)}${t.source === t.target ? '' : '  MISMATCH'}`);
  const balances =
    report.balanceMismatches.length === 0
      ? `all ${report.balancesChecked} accounts' balances equal`
      : `${report.balanceMismatches.length} of ${report.balancesChecked} accounts' balances differ`;
  const sealed = report.resealed > 0 ? `${report.resealed} sealed values sealed again under the new key` : `${report.sealedValues} sealed values copied as they were (same key)`;
  return [
    `Schema version ${report.schemaVersion}.`,
    `  ${'table'.padEnd(width)}  ${'data dir'.padStart(8)}  ${'postgres'.padStart(8)}`,
    ...lines,
    `${balances}; ${sealed}.`,
    report.balanceMismatches.length === 0 && report.tables.every((t) => t.source === t.target) ? 'Verified: the database holds everything the data dir held.' : 'NOT verified: rolled back.',
    '',
  ].join('\n');
}
