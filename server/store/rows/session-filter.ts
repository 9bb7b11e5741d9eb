// The sessions list's filters (repositories/sessions.ts, SessionFilter) as SQL, for both stores:
// the same conditions with each store's placeholders and JSON functions.
//
// The text search reads the stored timeline's final transcript lines (session_events, type
// 'transcript'): a LIKE with its wildcards escaped, case-insensitive, over at most
// TEXT_SEARCH_SESSIONS of the account's newest sessions that pass the other filters (each looked
// up by the timeline's primary key), so one search costs a bounded amount whatever the account's
// history holds.
import type { SessionFilter } from '../repositories/sessions.ts';

/** How many of the account's newest sessions (after the other filters) a text search reads. */
export const TEXT_SEARCH_SESSIONS = 1_000;

export interface SqlDialect {
  /** Adds a parameter and returns its placeholder. */
  param(value: string | number): string;
  /** The final transcript text of a session_events row `e`, as an expression (null for other rows). */
  finalTranscriptText: string;
  /** Case-insensitive LIKE with `\` as its escape. */
  like: 'LIKE' | 'ILIKE';
}

/** `%`, `_` and `\` taken literally in a LIKE pattern escaped with `\`. */
export function likeContaining(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The WHERE conditions of the filters other than text, on `sessions` (unqualified columns),
 * joined with AND; the account's own condition first.
 */
function conditions(accountId: string, filter: SessionFilter, now: number, d: SqlDialect): string {
  const where = [`account_id = ${d.param(accountId)}`];
  if (filter.flowId !== undefined) where.push(`flow_id = ${d.param(filter.flowId)}`);
  if (filter.version === 'draft') where.push('flow_draft = 1');
  else if (filter.version !== undefined) where.push(`flow_version = ${d.param(filter.version)} AND flow_draft = 0`);
  if (filter.status === 'expired') where.push(`status = 'created' AND expires_at <= ${d.param(now)}`);
  else if (filter.status === 'created') where.push(`status = 'created' AND expires_at > ${d.param(now)}`);
  else if (filter.status !== undefined) where.push(`status = ${d.param(filter.status)}`);
  if (filter.endReason !== undefined) where.push(`end_reason = ${d.param(filter.endReason)}`);
  if (filter.createdFrom !== undefined) where.push(`created_at >= ${d.param(filter.createdFrom)}`);
  if (filter.createdBefore !== undefined) where.push(`created_at < ${d.param(filter.createdBefore)}`);
  if (filter.fromNumber !== undefined) where.push(`from_number ${d.like} ${d.param(likeContaining(filter.fromNumber))} ESCAPE '\\'`);
  if (filter.success !== undefined) where.push(`id IN (SELECT session_id FROM session_analyses WHERE success = ${d.param(filter.success)})`);
  return where.join(' AND ');
}

/**
 * The newest of the account's sessions that pass `filter`, at most `limit`, as one SELECT of whole
 * rows. SQLite's `?` placeholders are positional: parameters are added in the order they appear.
 */
export function sessionListSql(accountId: string, filter: SessionFilter, limit: number, now: number, d: SqlDialect): string {
  const where = conditions(accountId, filter, now, d);
  if (filter.text === undefined) return `SELECT * FROM sessions WHERE ${where} ORDER BY created_at DESC, rowid DESC LIMIT ${d.param(limit)}`;
  // rowid by another name: SQLite's implicit rowid is not a column of a subquery's rows.
  const candidates = `SELECT *, rowid AS list_order FROM sessions WHERE ${where} ORDER BY created_at DESC, rowid DESC LIMIT ${d.param(TEXT_SEARCH_SESSIONS)}`;
  const said = `EXISTS (SELECT 1 FROM session_events e WHERE e.session_id = s.id AND e.type = 'transcript' AND ${d.finalTranscriptText} ${d.like} ${d.param(likeContaining(filter.text))} ESCAPE '\\')`;
  return `SELECT * FROM (${candidates}) s WHERE ${said} ORDER BY created_at DESC, list_order DESC LIMIT ${d.param(limit)}`;
}

/** sql.js: `?` placeholders; LIKE is case-insensitive for ASCII there. */
export function sqliteDialect(params: Array<string | number>): SqlDialect {
  return {
    param: (value) => (params.push(value), '?'),
    finalTranscriptText: `(CASE WHEN json_extract(e.data, '$.final') = 1 THEN json_extract(e.data, '$.text') END)`,
    like: 'LIKE',
  };
}

/** PostgreSQL: `$n` placeholders, ILIKE. */
export function postgresDialect(params: unknown[]): SqlDialect {
  return {
    param: (value) => (params.push(value), `$${params.length}`),
    finalTranscriptText: `(CASE WHEN (e.data::jsonb ->> 'final') = 'true' THEN (e.data::jsonb ->> 'text') END)`,
    like: 'ILIKE',
  };
}
