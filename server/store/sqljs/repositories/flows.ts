// The embedded store's (sql.js) flows repository; its interface and types are in ../../repositories/flows.ts.
import type { Database } from '../database.ts';
import { newId } from '../../ids.ts';
import { deleteFlowHistory, insertPublishedVersion } from './flow-versions.ts';
import type { Flow, FlowSummary, FlowsRepository } from '../../repositories/flows.ts';

interface FlowRow {
  id: string;
  account_id: string;
  name: string;
  yaml_content: string;
  layout: string | null;
  created_at: number;
  updated_at: number;
  published_version: number;
  has_draft: number;
}

/** Accounts whose flow list is kept in memory, most recently used last. */

const LISTS_CACHED = 1_000;

export function createFlowsRepository(db: Database): FlowsRepository {
  // The flow list is the studio's and the API's most frequent read, and this process is the
  // database's only writer (the data dir's lock), so a list stays valid until this repository changes a
  // flow of that account. Every write below forgets the account's list inside its transaction.
  const lists = new Map<string, FlowSummary[]>();
  const forgetList = (accountId: string) => lists.delete(accountId);

  const get = (accountId: string, id: string): Flow | null => {
    const row = db.get<FlowRow>(
      `SELECT flows.*, EXISTS (SELECT 1 FROM flow_drafts WHERE flow_drafts.flow_id = flows.id) AS has_draft
       FROM flows WHERE id = ? AND account_id = ?`,
      [id, accountId],
    );
    return row ? toFlow(row) : null;
  };

  return {
    async exists(accountId, id) {
      return db.get('SELECT 1 AS found FROM flows WHERE id = ? AND account_id = ?', [id, accountId]) !== undefined;
    },

    create({ accountId, name, yamlContent, version }) {
      const now = db.now();
      const flow: Flow = { id: newId(), accountId, name, yamlContent, layout: null, createdAt: now, updatedAt: now, publishedVersion: 1, hasDraft: false };
      return db.write((tx) => {
        forgetList(accountId);
        tx.run(
          'INSERT INTO flows (id, account_id, name, yaml_content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
          [flow.id, flow.accountId, flow.name, flow.yamlContent, flow.createdAt, flow.updatedAt],
        );
        insertPublishedVersion(tx, flow.id, { documentVersion: null, createdBy: null, ...version, yamlContent }, now);
        return flow;
      });
    },

    async list(accountId) {
      const cached = lists.get(accountId);
      if (cached) {
        lists.delete(accountId);
        lists.set(accountId, cached);
        return cached.map((flow) => ({ ...flow }));
      }
      const list = db
        .all<Pick<FlowRow, 'id' | 'name' | 'created_at' | 'updated_at'>>(
          'SELECT id, name, created_at, updated_at FROM flows WHERE account_id = ? ORDER BY created_at, rowid',
          [accountId],
        )
        .map((row) => ({ id: row.id, name: row.name, createdAt: row.created_at, updatedAt: row.updated_at }));
      lists.set(accountId, list);
      if (lists.size > LISTS_CACHED) lists.delete(lists.keys().next().value!);
      return list.map((flow) => ({ ...flow }));
    },

    get: async (accountId, id) => get(accountId, id),

    update(accountId, id, { name, yamlContent, layout, version }) {
      const updatedAt = db.now();
      return db.write((tx) => {
        forgetList(accountId);
        // A new text is a new published version (the API's writes mean what they did before drafts).
        if (yamlContent !== undefined && tx.get('SELECT 1 AS found FROM flows WHERE id = ? AND account_id = ?', [id, accountId])) {
          insertPublishedVersion(tx, id, { documentVersion: null, createdBy: null, ...version, yamlContent }, updatedAt);
        }
        // COALESCE keeps a field that was not given; name and YAML are NOT NULL, so null never
        // means "clear" for them. The layout can be cleared, so it is set only when given.
        const changed = tx.run(
          `UPDATE flows SET name = COALESCE(?, name), yaml_content = COALESCE(?, yaml_content),
             layout = CASE WHEN ? THEN ? ELSE layout END, updated_at = ?
           WHERE id = ? AND account_id = ?`,
          [name ?? null, yamlContent ?? null, layout !== undefined ? 1 : 0, layout ?? null, updatedAt, id, accountId],
        );
        return changed === 1 ? get(accountId, id) : null;
      });
    },

    delete(accountId, id) {
      return db.write((tx) => {
        forgetList(accountId);
        const deleted = tx.run('DELETE FROM flows WHERE id = ? AND account_id = ?', [id, accountId]) === 1;
        if (deleted) deleteFlowHistory(tx, id);
        return deleted;
      });
    },

    forgetList,
  };
}

function toFlow(row: FlowRow): Flow {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    yamlContent: row.yaml_content,
    layout: row.layout,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    publishedVersion: row.published_version,
    hasDraft: row.has_draft === 1,
  };
}
