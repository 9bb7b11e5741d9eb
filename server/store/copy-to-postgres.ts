// `voxflow migrate-store`'s copy (docs/hosting.md): every row of an embedded data dir into an empty
// PostgreSQL database, table by table at the SQL level, so ids, times, ledger sequence numbers
// and idempotency keys arrive exactly as they were. Both schemas are parallel (postgres/
// migrations.ts: same tables, same column names), so a table's columns are copied by name: the
// columns both sides have, whatever migrations add later. A source column the target lacks
// stops the copy (its values would be lost); a target-only column (PostgreSQL's `rowid`
// identity) takes its default, and since rows go in in the source's rowid order, it numbers them
// in the same order SQLite did.
//
// All of it, the check that the target is empty and the verification included, runs in ONE
// PostgreSQL transaction: a failure or a mismatch rolls back and the target holds what it held
// before (its schema, which opening it creates as any node would). Rows are read and inserted in
// batches, so a data dir with 100k timeline rows never sits in memory at once.
//
// Sealed values (provider keys, webhook signing secrets, account secrets: SecretBox, bound to a
// context) are opened with the source's key and sealed again with the target's when the keys
// differ. Which columns are sealed, and for what context, the caller says (the contexts belong to
// the layers that seal them); every one is checked to open before anything is written.

import type { Database } from './sqljs/database.ts';
import type { PgDatabase, PgQueryable } from './postgres/database.ts';
import type { SecretBox } from '../security/secret-box.ts';

/** A column holding SecretBox-sealed text, and the context its row seals it for. */
export interface SealedColumn {
  table: string;
  column: string;
  context(row: Record<string, unknown>): string;
}

export interface CopyOptions {
  source: Database;
  target: PgDatabase;
  /** Opens the source's sealed values (its data dir's secret.key, or the key it was served with). */
  sourceBox: SecretBox;
  /** Seals them for the target (the nodes' VOXFLOW_SECRET_KEY). */
  targetBox: SecretBox;
  /** False when both boxes hold the same key: sealed values are then copied as they are (and still checked). */
  keysDiffer: boolean;
  sealed: readonly SealedColumn[];
  /** Rows per INSERT at most (fewer for wide tables); 1000 by default. */
  batchRows?: number;
  /** Called after each batch of each table; for a progress line. */
  onProgress?: (table: string, copied: number, total: number) => void;
}

export interface TableReport {
  table: string;
  source: number;
  target: number;
}

export interface CopyReport {
  schemaVersion: number;
  tables: TableReport[];
  /** Accounts whose balance (SUM of the ledger) was compared, and those that differed. */
  balancesChecked: number;
  balanceMismatches: Array<{ accountId: string; source: number; target: number }>;
  /** Sealed values copied, and how many of them were sealed again under the target's key. */
  sealedValues: number;
  resealed: number;
}

export type CopyRefusal = 'schema_mismatch' | 'target_not_empty' | 'wrong_source_key' | 'unknown_sealed_column' | 'verification_failed';

/** The copy did not happen (or was rolled back): the target is as it was. */
export class CopyRefusedError extends Error {
  constructor(
    readonly reason: CopyRefusal,
    message: string,
    /** For verification_failed: what was compared. */
    readonly report?: CopyReport,
  ) {
    super(message);
    this.name = 'CopyRefusedError';
  }
}

/** Tables that are each engine's own bookkeeping, not data. */
const SQLITE_OWN = new Set(['_meta']);
const PG_OWN = new Set(['schema_migrations']);
/** PostgreSQL takes at most 65,535 parameters a statement; stay well below. */
const MAX_PARAMS = 30_000;

type Row = Record<string, unknown>;

interface TablePlan {
  table: string;
  columns: string[];
  /** Identity columns given explicit values: their sequence must move past them. */
  identities: string[];
  sealed: SealedColumn[];
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

export async function copyEmbeddedToPostgres(options: CopyOptions): Promise<CopyReport> {
  const { source, target } = options;
  const schemaVersion = await checkSameSchemaVersion(source, target);
  const plans = await planTables(options);
  const sealedValues = checkSealedValuesOpen(options, plans);

  return target.transaction(async (tx) => {
    await refuseNonEmpty(tx, plans);
    let resealed = 0;
    for (const plan of plans) resealed += await copyTable(options, tx, plan);
    const report = await verify(source, tx, plans, schemaVersion, sealedValues, resealed);
    await checkTargetSealedValuesOpen(options, tx, plans);
    if (report.tables.some((t) => t.source !== t.target) || report.balanceMismatches.length > 0) {
      // Thrown inside the transaction: it rolls back, and the caller prints the report.
      throw new CopyRefusedError('verification_failed', describeMismatches(report), report);
    }
    return report;
  });
}

async function checkSameSchemaVersion(source: Database, target: PgDatabase): Promise<number> {
  const sourceVersion = Number(source.get<{ value: unknown }>("SELECT value FROM _meta WHERE key = 'schema_version'")?.value ?? 0);
  const targetVersion = Number((await target.row<{ version: number }>('SELECT max(version) AS version FROM schema_migrations'))?.version ?? 0);
  if (sourceVersion !== targetVersion) {
    throw new CopyRefusedError(
      'schema_mismatch',
      `the data dir's schema is at version ${sourceVersion} but the PostgreSQL one at ${targetVersion}: both are migrated by this Voxflow when opened, so one of them was made by another version of it`,
    );
  }
  return sourceVersion;
}

/** Every source table with its columns, in an order where a referenced table comes before those referencing it. */
async function planTables(options: CopyOptions): Promise<TablePlan[]> {
  const { source, target } = options;
  const sourceTables = source
    .all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .map((r) => r.name)
    .filter((name) => !SQLITE_OWN.has(name));
  const targetColumns = await target.rows<{ table_name: string; column_name: string; is_identity: string }>(
    `SELECT table_name, column_name, is_identity FROM information_schema.columns
      WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
  );
  const byTable = new Map<string, Array<{ name: string; identity: boolean }>>();
  for (const c of targetColumns) {
    if (PG_OWN.has(c.table_name)) continue;
    const list = byTable.get(c.table_name) ?? [];
    list.push({ name: c.column_name, identity: c.is_identity === 'YES' });
    byTable.set(c.table_name, list);
  }
  const missingTables = sourceTables.filter((t) => !byTable.has(t));
  if (missingTables.length > 0) {
    throw new CopyRefusedError('schema_mismatch', `the PostgreSQL database has no table ${missingTables.join(', ')}, which the data dir has`);
  }

  const plans: TablePlan[] = [];
  for (const table of sourceTables) {
    const sourceColumns = source.all<{ name: string }>(`PRAGMA table_info(${quote(table)})`).map((r) => r.name);
    const targetCols = byTable.get(table)!;
    const targetNames = new Set(targetCols.map((c) => c.name));
    const lost = sourceColumns.filter((c) => !targetNames.has(c));
    if (lost.length > 0) {
      throw new CopyRefusedError('schema_mismatch', `the PostgreSQL table ${table} has no column ${lost.join(', ')}: its values would be lost`);
    }
    const sealed = options.sealed.filter((s) => s.table === table && sourceColumns.includes(s.column));
    // A sealed column nobody described cannot be sealed again for the target's key.
    const unknownSealed = sourceColumns.filter((c) => c.endsWith('_enc') && !sealed.some((s) => s.column === c));
    if (unknownSealed.length > 0 && options.keysDiffer) {
      throw new CopyRefusedError(
        'unknown_sealed_column',
        `${table}.${unknownSealed.join(', ')} looks sealed, but this Voxflow does not know what it is sealed for, so it cannot be sealed again under the new key; run the copy with the same VOXFLOW_SECRET_KEY as the data dir's key`,
      );
    }
    plans.push({
      table,
      columns: sourceColumns,
      identities: targetCols.filter((c) => c.identity && sourceColumns.includes(c.name)).map((c) => c.name),
      sealed,
    });
  }
  return orderByReferences(plans, await target.rows<{ child: string; parent: string }>(
    `SELECT conrelid::regclass::text AS child, confrelid::regclass::text AS parent
       FROM pg_constraint WHERE contype = 'f' AND connamespace = current_schema()::regnamespace`,
  ));
}

function orderByReferences(plans: TablePlan[], references: Array<{ child: string; parent: string }>): TablePlan[] {
  const unquote = (name: string) => name.replace(/^"|"$/g, '');
  const ordered: TablePlan[] = [];
  const placed = new Set<string>();
  const place = (plan: TablePlan, path: Set<string>) => {
    if (placed.has(plan.table) || path.has(plan.table)) return;
    path.add(plan.table);
    for (const ref of references) {
      if (unquote(ref.child) !== plan.table || unquote(ref.parent) === plan.table) continue;
      const parent = plans.find((p) => p.table === unquote(ref.parent));
      if (parent) place(parent, path);
    }
    placed.add(plan.table);
    ordered.push(plan);
  };
  for (const plan of plans) place(plan, new Set());
  return ordered;
}

/** Each sealed value of the source opens with the source's key; counts them. Refuses before anything is written. */
function checkSealedValuesOpen(options: CopyOptions, plans: TablePlan[]): number {
  let count = 0;
  const failures: string[] = [];
  for (const plan of plans) {
    for (const sealed of plan.sealed) {
      const rows = options.source.all<Row>(`SELECT * FROM ${quote(plan.table)} WHERE ${quote(sealed.column)} IS NOT NULL`);
      for (const row of rows) {
        count++;
        try {
          options.sourceBox.open(String(row[sealed.column]), sealed.context(row));
        } catch {
          failures.push(`${plan.table}.${sealed.column} (${sealed.context(row)})`);
        }
      }
    }
  }
  if (failures.length > 0) {
    throw new CopyRefusedError(
      'wrong_source_key',
      `${failures.length} of ${count} sealed values of the data dir do not open with the source key (the first: ${failures[0]}). ` +
        `Give the key the data dir was served with (its secret.key, or the VOXFLOW_SECRET_KEY it ran with) in a file: --from-secret-key-file FILE`,
    );
  }
  return count;
}

async function refuseNonEmpty(tx: PgQueryable, plans: TablePlan[]): Promise<void> {
  const filled: string[] = [];
  for (const plan of plans) {
    const row = await tx.row<{ n: number }>(`SELECT count(*) AS n FROM ${quote(plan.table)}`);
    if ((row?.n ?? 0) > 0) filled.push(`${plan.table} (${row!.n} ${row!.n === 1 ? 'row' : 'rows'})`);
  }
  if (filled.length > 0) {
    throw new CopyRefusedError(
      'target_not_empty',
      `the PostgreSQL database already holds data: ${filled.join(', ')}. migrate-store copies into an empty database only (create a new one, or drop this one's tables), so nothing there is overwritten or mixed with the copy`,
    );
  }
}

/** Copies one table in rowid order, batch by batch; returns how many sealed values it sealed again. */
async function copyTable(options: CopyOptions, tx: PgQueryable, plan: TablePlan): Promise<number> {
  const { source } = options;
  const total = source.get<{ n: number }>(`SELECT count(*) AS n FROM ${quote(plan.table)}`)?.n ?? 0;
  const perBatch = Math.max(1, Math.min(options.batchRows ?? 1000, Math.floor(MAX_PARAMS / plan.columns.length)));
  const columnList = plan.columns.map(quote).join(', ');
  let resealed = 0;
  let copied = 0;
  let after = -Infinity;
  for (;;) {
    const rows = source.all<Row>(
      `SELECT rowid AS "__copy_rowid", ${columnList} FROM ${quote(plan.table)} WHERE rowid > ? ORDER BY rowid LIMIT ?`,
      [after === -Infinity ? Number.MIN_SAFE_INTEGER : after, perBatch],
    );
    if (rows.length === 0) break;
    after = Number(rows.at(-1)!.__copy_rowid);
    const params: unknown[] = [];
    const tuples: string[] = [];
    for (const row of rows) {
      if (options.keysDiffer) {
        for (const sealed of plan.sealed) {
          const value = row[sealed.column];
          if (value === null || value === undefined) continue;
          const context = sealed.context(row);
          row[sealed.column] = options.targetBox.seal(options.sourceBox.open(String(value), context), context);
          resealed++;
        }
      }
      const placeholders = plan.columns.map((column) => {
        params.push(toPg(row[column]));
        return `$${params.length}`;
      });
      tuples.push(`(${placeholders.join(', ')})`);
    }
    await tx.run(`INSERT INTO ${quote(plan.table)} (${columnList}) VALUES ${tuples.join(', ')}`, params);
    copied += rows.length;
    options.onProgress?.(plan.table, copied, total);
  }
  // An explicit value does not move an identity's sequence: the next ledger entry would collide.
  for (const column of plan.identities) {
    await tx.run(
      `SELECT setval(pg_get_serial_sequence($1, $2), GREATEST((SELECT max(${quote(column)}) FROM ${quote(plan.table)}), 1), (SELECT count(*) > 0 FROM ${quote(plan.table)}))`,
      [plan.table, column],
    );
  }
  return resealed;
}

/** sql.js gives BLOBs as Uint8Array; pg wants a Buffer for bytea. Everything else passes as is. */
function toPg(value: unknown): unknown {
  return value instanceof Uint8Array ? Buffer.from(value) : value;
}

async function verify(source: Database, tx: PgQueryable, plans: TablePlan[], schemaVersion: number, sealedValues: number, resealed: number): Promise<CopyReport> {
  const tables: TableReport[] = [];
  for (const plan of plans) {
    const sourceCount = source.get<{ n: number }>(`SELECT count(*) AS n FROM ${quote(plan.table)}`)?.n ?? 0;
    const targetCount = (await tx.row<{ n: number }>(`SELECT count(*) AS n FROM ${quote(plan.table)}`))?.n ?? 0;
    tables.push({ table: plan.table, source: Number(sourceCount), target: Number(targetCount) });
  }
  // Every account's balance: the SUM of its ledger, accounts without entries at 0.
  const balanceSql = `SELECT a.id AS account_id, COALESCE(SUM(l.delta_cents), 0) AS balance
                        FROM accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id GROUP BY a.id`;
  const sourceBalances = new Map(source.all<{ account_id: string; balance: number }>(balanceSql).map((r) => [r.account_id, Number(r.balance)]));
  const targetBalances = new Map((await tx.rows<{ account_id: string; balance: number }>(balanceSql)).map((r) => [r.account_id, Number(r.balance)]));
  const balanceMismatches: CopyReport['balanceMismatches'] = [];
  for (const accountId of new Set([...sourceBalances.keys(), ...targetBalances.keys()])) {
    const s = sourceBalances.get(accountId) ?? Number.NaN;
    const t = targetBalances.get(accountId) ?? Number.NaN;
    if (s !== t) balanceMismatches.push({ accountId, source: s, target: t });
  }
  return { schemaVersion, tables, balancesChecked: sourceBalances.size, balanceMismatches, sealedValues, resealed };
}

/** What was sealed for the target opens with the target's key, in its own context (a row moved to another account would not). */
async function checkTargetSealedValuesOpen(options: CopyOptions, tx: PgQueryable, plans: TablePlan[]): Promise<void> {
  for (const plan of plans) {
    for (const sealed of plan.sealed) {
      const rows = await tx.rows<Row>(`SELECT * FROM ${quote(plan.table)} WHERE ${quote(sealed.column)} IS NOT NULL`);
      for (const row of rows) {
        try {
          options.targetBox.open(String(row[sealed.column]), sealed.context(row));
        } catch {
          throw new CopyRefusedError('verification_failed', `${plan.table}.${sealed.column} (${sealed.context(row)}) does not open with the target key after the copy`);
        }
      }
    }
  }
}

function describeMismatches(report: CopyReport): string {
  const parts = report.tables.filter((t) => t.source !== t.target).map((t) => `${t.table}: ${t.source} rows in the data dir, ${t.target} in PostgreSQL`);
  for (const m of report.balanceMismatches) parts.push(`account ${m.accountId}: balance ${m.source} in the data dir, ${m.target} in PostgreSQL`);
  return `the copy does not match its source (${parts.join('; ')}); it was rolled back`;
}
