// The embedded store's (sql.js) flow-versions repository; its interface and types are in ../../repositories/flow-versions.ts.
import type { Database, WriteTransaction } from '../database.ts';
import { newId } from '../../ids.ts';
import type { FlowVersionSummary, FlowVersion, FlowDraft, NewVersion, DraftWrite, PublishResult, FlowVersionsRepository } from '../../repositories/flow-versions.ts';
import type { VersionRow, DraftRow } from '../../rows/flow-versions.ts';
import { publishedEtag, toAuthor } from '../../rows/flow-versions.ts';

/**
 * Writes version n+1 of a flow and makes it the published one, inside the caller's transaction;
 * returns its number. The flow must exist (the caller checked it in the same transaction).
 */

export function insertPublishedVersion(tx: WriteTransaction, flowId: string, version: NewVersion, now: number): number {
  const last = tx.get<{ latest: number | null }>('SELECT MAX(number) AS latest FROM flow_versions WHERE flow_id = ?', [flowId]);
  const number = (last?.latest ?? 0) + 1;
  tx.run(
    `INSERT INTO flow_versions (flow_id, number, yaml_content, document_version, note, created_at, created_by_kind, created_by_key)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
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
  tx.run('UPDATE flows SET yaml_content = ?, published_version = ?, updated_at = ? WHERE id = ?', [version.yamlContent, number, now, flowId]);
  return number;
}

/** Everything a flow's history holds goes with the flow: its versions, its draft, its tests and their runs. */

export function deleteFlowHistory(tx: WriteTransaction, flowId: string): void {
  tx.run('DELETE FROM flow_versions WHERE flow_id = ?', [flowId]);
  tx.run('DELETE FROM flow_drafts WHERE flow_id = ?', [flowId]);
  tx.run('DELETE FROM flow_tests WHERE flow_id = ?', [flowId]);
  tx.run('DELETE FROM flow_test_runs WHERE flow_id = ?', [flowId]);
  tx.run('DELETE FROM experiments WHERE flow_id = ?', [flowId]);
}

/**
 * `flowChanged` is told inside the transaction that publishes, so the flows repository's cached
 * list (which carries updated_at) is never older than the flow.
 */

export function createFlowVersionsRepository(db: Database, flowChanged: (accountId: string) => void): FlowVersionsRepository {
  const publishedOf = (read: Pick<WriteTransaction, 'get'>, accountId: string, flowId: string): number | null =>
    read.get<{ published_version: number }>('SELECT published_version FROM flows WHERE id = ? AND account_id = ?', [flowId, accountId])?.published_version ?? null;

  const draftOf = (read: Pick<WriteTransaction, 'get'>, flowId: string): FlowDraft | null => {
    const row = read.get<DraftRow>('SELECT * FROM flow_drafts WHERE flow_id = ?', [flowId]);
    return row ? toDraft(row) : null;
  };

  const etagOf = (read: Pick<WriteTransaction, 'get'>, accountId: string, flowId: string): string | null => {
    const published = publishedOf(read, accountId, flowId);
    if (published === null) return null;
    return draftOf(read, flowId)?.etag ?? publishedEtag(published);
  };

  const getVersion = (read: Pick<WriteTransaction, 'get'>, flowId: string, number: number): FlowVersion | null => {
    const row = read.get<VersionRow>('SELECT * FROM flow_versions WHERE flow_id = ? AND number = ?', [flowId, number]);
    return row ? toVersion(row) : null;
  };

  return {
    async list(accountId, flowId) {
      if (publishedOf(db, accountId, flowId) === null) return null;
      return db
        .all<Omit<VersionRow, 'yaml_content' | 'flow_id'>>(
          `SELECT number, document_version, note, created_at, created_by_kind, created_by_key
           FROM flow_versions WHERE flow_id = ? ORDER BY number DESC`,
          [flowId],
        )
        .map(toSummary);
    },

    async get(accountId, flowId, number) {
      if (publishedOf(db, accountId, flowId) === null) return null;
      return getVersion(db, flowId, number);
    },

    async getDraft(accountId, flowId) {
      if (publishedOf(db, accountId, flowId) === null) return null;
      return draftOf(db, flowId);
    },

    async currentEtag(accountId, flowId) {
      return etagOf(db, accountId, flowId);
    },

    saveDraft(accountId, flowId, yamlContent, ifMatch) {
      const now = db.now();
      return db.write((tx): DraftWrite => {
        const published = publishedOf(tx, accountId, flowId);
        if (published === null) return { ok: false, reason: 'not_found' };
        const existing = draftOf(tx, flowId);
        const current = existing?.etag ?? publishedEtag(published);
        if (ifMatch !== undefined && ifMatch !== current) return { ok: false, reason: 'conflict', currentEtag: current };
        const draft: FlowDraft = { flowId, yamlContent, baseVersion: existing?.baseVersion ?? published, etag: `d-${newId()}`, updatedAt: now };
        tx.run(
          `INSERT INTO flow_drafts (flow_id, yaml_content, base_version, etag, updated_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (flow_id) DO UPDATE SET yaml_content = excluded.yaml_content, etag = excluded.etag, updated_at = excluded.updated_at`,
          [flowId, yamlContent, draft.baseVersion, draft.etag, now],
        );
        return { ok: true, draft };
      });
    },

    discardDraft(accountId, flowId, ifMatch) {
      return db.write((tx) => {
        const published = publishedOf(tx, accountId, flowId);
        if (published === null) return { ok: false as const, reason: 'not_found' as const };
        const current = draftOf(tx, flowId)?.etag ?? publishedEtag(published);
        if (ifMatch !== undefined && ifMatch !== current) return { ok: false as const, reason: 'conflict' as const, currentEtag: current };
        tx.run('DELETE FROM flow_drafts WHERE flow_id = ?', [flowId]);
        return { ok: true as const, draft: null };
      });
    },

    publish(accountId, flowId, version, options = {}) {
      const now = db.now();
      return db.write((tx): PublishResult => {
        const published = publishedOf(tx, accountId, flowId);
        if (published === null) return { ok: false, reason: 'not_found' };
        const draft = draftOf(tx, flowId);
        const current = draft?.etag ?? publishedEtag(published);
        if (options.expectEtag !== undefined && options.expectEtag !== current) return { ok: false, reason: 'conflict', currentEtag: current };
        if (options.fromDraft) {
          if (!draft) return { ok: false, reason: 'no_draft' };
          tx.run('DELETE FROM flow_drafts WHERE flow_id = ?', [flowId]);
        }
        flowChanged(accountId);
        const number = insertPublishedVersion(tx, flowId, version, now);
        return { ok: true, version: getVersion(tx, flowId, number)! };
      });
    },
  };
}

function toVersion(row: VersionRow): FlowVersion {
  return { ...toSummary(row), flowId: row.flow_id, yamlContent: row.yaml_content };
}

function toSummary(row: Omit<VersionRow, 'yaml_content' | 'flow_id'>): FlowVersionSummary {
  return {
    number: row.number,
    documentVersion: row.document_version,
    note: row.note,
    createdAt: row.created_at,
    createdBy: toAuthor(row.created_by_kind, row.created_by_key),
  };
}

function toDraft(row: DraftRow): FlowDraft {
  return { flowId: row.flow_id, yamlContent: row.yaml_content, baseVersion: row.base_version, etag: row.etag, updatedAt: row.updated_at };
}
