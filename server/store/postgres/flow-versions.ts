// A flow's history on PostgreSQL: the same promises as the sql.js repository
// (server/store/repositories/flow-versions.ts), kept with several nodes writing at once.
//
// Every write to a flow's draft or published pointer first locks the flow's row
// (`SELECT … FOR UPDATE`), inside one transaction: two nodes publishing the same flow at once
// queue on that lock, and the second reads the first one's version after it, so they get n+1
// and n+2, never two n+1 (the (flow_id, number) key would refuse the second anyway). A draft's
// If-Match compare and its write happen under the same lock, so of two saves made with the same
// tag exactly one wins and the other hears of the conflict.
import { newId } from '../ids.ts';
import type { DraftWrite, FlowDraft, FlowVersion, FlowVersionSummary, FlowVersionsRepository, NewVersion, PublishResult } from '../repositories/flow-versions.ts';
import type { PgDatabase, PgQueryable } from './database.ts';
import type { VersionRow, DraftRow } from '../rows/flow-versions.ts';
import { publishedEtag, toAuthor } from '../rows/flow-versions.ts';

/**
 * The flow's published version number, its row locked until the transaction ends; null when
 * the account has no such flow. Every writer of a flow's history takes this lock first.
 */
export async function lockFlow(tx: PgQueryable, accountId: string, flowId: string): Promise<number | null> {
  const row = await tx.row<{ published_version: number }>('SELECT published_version FROM flows WHERE id = $1 AND account_id = $2 FOR UPDATE', [flowId, accountId]);
  return row ? Number(row.published_version) : null;
}

/**
 * Writes version n+1 of a flow and makes it the published one, inside the caller's transaction;
 * returns its number. The caller holds the flow's row lock (lockFlow), or has just inserted the
 * flow in the same transaction, so no other node numbers a version of it meanwhile.
 */
export async function insertPublishedVersion(tx: PgQueryable, flowId: string, version: NewVersion, now: number): Promise<number> {
  const last = await tx.row<{ latest: number | null }>('SELECT MAX(number) AS latest FROM flow_versions WHERE flow_id = $1', [flowId]);
  const number = Number(last?.latest ?? 0) + 1;
  await tx.run(
    `INSERT INTO flow_versions (flow_id, number, yaml_content, document_version, note, created_at, created_by_kind, created_by_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      flowId,
      number,
      version.yamlContent,
      version.documentVersion,
      version.note ?? '',
      now,
      version.createdBy?.kind ?? null,
      version.createdBy?.kind === 'api_key' ? version.createdBy.apiKeyId : null,
    ],
  );
  await tx.run('UPDATE flows SET yaml_content = $1, published_version = $2, updated_at = $3 WHERE id = $4', [version.yamlContent, number, now, flowId]);
  return number;
}

/** Everything a flow's history holds goes with the flow: its versions, its draft, its tests and their runs. */
export async function deleteFlowHistory(tx: PgQueryable, flowId: string): Promise<void> {
  for (const table of ['flow_versions', 'flow_drafts', 'flow_tests', 'flow_test_runs', 'experiments']) {
    await tx.run(`DELETE FROM ${table} WHERE flow_id = $1`, [flowId]);
  }
}

export function createPgFlowVersionsRepository(db: PgDatabase): FlowVersionsRepository {
  const publishedOf = async (read: PgQueryable, accountId: string, flowId: string): Promise<number | null> => {
    const row = await read.row<{ published_version: number }>('SELECT published_version FROM flows WHERE id = $1 AND account_id = $2', [flowId, accountId]);
    return row ? Number(row.published_version) : null;
  };

  const draftOf = async (read: PgQueryable, flowId: string): Promise<FlowDraft | null> => {
    const row = await read.row<DraftRow>('SELECT * FROM flow_drafts WHERE flow_id = $1', [flowId]);
    return row ? toDraft(row) : null;
  };

  const getVersion = async (read: PgQueryable, flowId: string, number: number): Promise<FlowVersion | null> => {
    const row = await read.row<VersionRow>('SELECT * FROM flow_versions WHERE flow_id = $1 AND number = $2', [flowId, number]);
    return row ? toVersion(row) : null;
  };

  return {
    async list(accountId, flowId) {
      if ((await publishedOf(db, accountId, flowId)) === null) return null;
      const rows = await db.rows<Omit<VersionRow, 'yaml_content' | 'flow_id'>>(
        `SELECT number, document_version, note, created_at, created_by_kind, created_by_key
         FROM flow_versions WHERE flow_id = $1 ORDER BY number DESC`,
        [flowId],
      );
      return rows.map(toSummary);
    },

    async get(accountId, flowId, number) {
      if ((await publishedOf(db, accountId, flowId)) === null) return null;
      return getVersion(db, flowId, number);
    },

    async getDraft(accountId, flowId) {
      if ((await publishedOf(db, accountId, flowId)) === null) return null;
      return draftOf(db, flowId);
    },

    async currentEtag(accountId, flowId) {
      // One statement, so the pointer and the draft are read from one snapshot.
      const row = await db.row<{ published_version: number; etag: string | null }>(
        `SELECT f.published_version, d.etag FROM flows f LEFT JOIN flow_drafts d ON d.flow_id = f.id
         WHERE f.id = $1 AND f.account_id = $2`,
        [flowId, accountId],
      );
      if (!row) return null;
      return row.etag ?? publishedEtag(Number(row.published_version));
    },

    saveDraft(accountId, flowId, yamlContent, ifMatch) {
      const now = db.now();
      return db.transaction(async (tx): Promise<DraftWrite> => {
        const published = await lockFlow(tx, accountId, flowId);
        if (published === null) return { ok: false, reason: 'not_found' };
        const existing = await draftOf(tx, flowId);
        const current = existing?.etag ?? publishedEtag(published);
        if (ifMatch !== undefined && ifMatch !== current) return { ok: false, reason: 'conflict', currentEtag: current };
        const draft: FlowDraft = { flowId, yamlContent, baseVersion: existing?.baseVersion ?? published, etag: `d-${newId()}`, updatedAt: now };
        await tx.run(
          `INSERT INTO flow_drafts (flow_id, yaml_content, base_version, etag, updated_at) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (flow_id) DO UPDATE SET yaml_content = excluded.yaml_content, etag = excluded.etag, updated_at = excluded.updated_at`,
          [flowId, yamlContent, draft.baseVersion, draft.etag, now],
        );
        return { ok: true, draft };
      });
    },

    discardDraft(accountId, flowId, ifMatch) {
      return db.transaction(async (tx) => {
        const published = await lockFlow(tx, accountId, flowId);
        if (published === null) return { ok: false as const, reason: 'not_found' as const };
        const current = (await draftOf(tx, flowId))?.etag ?? publishedEtag(published);
        if (ifMatch !== undefined && ifMatch !== current) return { ok: false as const, reason: 'conflict' as const, currentEtag: current };
        await tx.run('DELETE FROM flow_drafts WHERE flow_id = $1', [flowId]);
        return { ok: true as const, draft: null };
      });
    },

    publish(accountId, flowId, version, options = {}) {
      const now = db.now();
      return db.transaction(async (tx): Promise<PublishResult> => {
        const published = await lockFlow(tx, accountId, flowId);
        if (published === null) return { ok: false, reason: 'not_found' };
        const draft = await draftOf(tx, flowId);
        const current = draft?.etag ?? publishedEtag(published);
        if (options.expectEtag !== undefined && options.expectEtag !== current) return { ok: false, reason: 'conflict', currentEtag: current };
        if (options.fromDraft) {
          if (!draft) return { ok: false, reason: 'no_draft' };
          await tx.run('DELETE FROM flow_drafts WHERE flow_id = $1', [flowId]);
        }
        const number = await insertPublishedVersion(tx, flowId, version, now);
        return { ok: true, version: (await getVersion(tx, flowId, number))! };
      });
    },
  };
}

function toVersion(row: VersionRow): FlowVersion {
  return { ...toSummary(row), flowId: row.flow_id, yamlContent: row.yaml_content };
}

function toSummary(row: Omit<VersionRow, 'yaml_content' | 'flow_id'>): FlowVersionSummary {
  return {
    number: Number(row.number),
    documentVersion: row.document_version,
    note: row.note,
    createdAt: row.created_at,
    createdBy: toAuthor(row.created_by_kind, row.created_by_key),
  };
}

function toDraft(row: DraftRow): FlowDraft {
  return { flowId: row.flow_id, yamlContent: row.yaml_content, baseVersion: Number(row.base_version), etag: row.etag, updatedAt: row.updated_at };
}
