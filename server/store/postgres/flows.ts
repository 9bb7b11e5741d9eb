// Flows on PostgreSQL (docs/hosting.md): the same promises as the sql.js repository
// (server/store/repositories/flows.ts).
//
// No list cache here. The sql.js store may keep an account's flow list in memory because its
// process is the database's only writer; with several nodes, a flow created or renamed on node B
// would stay invisible in node A's cached list. Reading the list is one indexed query
// (flows_by_account), so every list() reads the database. forgetList() is therefore a no-op: it
// is the hook a cache would be invalidated through, should one come back with LISTEN/NOTIFY
// (notify on every write below, forget on every node that hears it).
import { newId } from '../ids.ts';
import type { Flow, FlowsRepository, FlowSummary } from '../repositories/flows.ts';
import { deleteFlowHistory, insertPublishedVersion, lockFlow } from './flow-versions.ts';
import { prepared, type PgDatabase, type PgQueryable } from './database.ts';

// Sent by every GET /v1/flows and POST /v1/sessions: prepared once per connection.
const LIST = prepared('SELECT id, name, created_at, updated_at FROM flows WHERE account_id = $1 ORDER BY created_at, rowid');
const EXISTS = prepared('SELECT 1 AS found FROM flows WHERE id = $1 AND account_id = $2');

interface FlowRow {
  id: string;
  account_id: string;
  name: string;
  yaml_content: string;
  layout: string | null;
  created_at: number;
  updated_at: number;
  published_version: number;
  has_draft: boolean;
}

const SELECT_FLOW = `SELECT flows.id, flows.account_id, flows.name, flows.yaml_content, flows.layout, flows.created_at, flows.updated_at,
    flows.published_version, EXISTS (SELECT 1 FROM flow_drafts WHERE flow_drafts.flow_id = flows.id) AS has_draft
  FROM flows WHERE id = $1 AND account_id = $2`;

export function createPgFlowsRepository(db: PgDatabase): FlowsRepository {
  const get = async (read: PgQueryable, accountId: string, id: string): Promise<Flow | null> => {
    const row = await read.row<FlowRow>(SELECT_FLOW, [id, accountId]);
    return row ? toFlow(row) : null;
  };

  return {
    async exists(accountId, id) {
      return (await db.row(EXISTS, [id, accountId])) !== null;
    },

    async create({ accountId, name, yamlContent, version }) {
      const now = db.now();
      const flow: Flow = { id: newId(), accountId, name, yamlContent, layout: null, createdAt: now, updatedAt: now, publishedVersion: 1, hasDraft: false };
      const first = { documentVersion: null, createdBy: null, ...version };
      // The flow and its version 1 in one statement: one round trip and one commit, where BEGIN,
      // four statements and COMMIT took six (a durable POST /v1/flows waited for each).
      // A new flow has no versions yet, so there is no MAX(number) to read, and a statement is
      // atomic on its own: both rows or neither.
      await db.run(
        `WITH flow AS (
           INSERT INTO flows (id, account_id, name, yaml_content, created_at, updated_at, published_version)
           VALUES ($1, $2, $3, $4, $5, $5, 1) RETURNING id)
         INSERT INTO flow_versions (flow_id, number, yaml_content, document_version, note, created_at, created_by_kind, created_by_key)
         SELECT id, 1, $4, $6, $7, $5, $8, $9 FROM flow`,
        [
          flow.id,
          flow.accountId,
          flow.name,
          yamlContent,
          now,
          first.documentVersion,
          first.note ?? '',
          first.createdBy?.kind ?? null,
          first.createdBy?.kind === 'api_key' ? first.createdBy.apiKeyId : null,
        ],
      );
      return flow;
    },

    async list(accountId): Promise<FlowSummary[]> {
      const rows = await db.rows<Pick<FlowRow, 'id' | 'name' | 'created_at' | 'updated_at'>>(LIST, [accountId]);
      return rows.map((row) => ({ id: row.id, name: row.name, createdAt: row.created_at, updatedAt: row.updated_at }));
    },

    get: (accountId, id) => get(db, accountId, id),

    update(accountId, id, { name, yamlContent, layout, version }) {
      const updatedAt = db.now();
      return db.transaction(async (tx) => {
        // The flow's row lock orders this against a publish on another node (flow-versions.ts).
        if ((await lockFlow(tx, accountId, id)) === null) return null;
        // A new text is a new published version (the API's writes mean what they did before drafts).
        if (yamlContent !== undefined) {
          await insertPublishedVersion(tx, id, { documentVersion: null, createdBy: null, ...version, yamlContent }, updatedAt);
        }
        // COALESCE keeps a field that was not given; the layout can be cleared, so it is set only when given.
        await tx.run(
          `UPDATE flows SET name = COALESCE($1::text, name), yaml_content = COALESCE($2::text, yaml_content),
             layout = CASE WHEN $3::boolean THEN $4::text ELSE layout END, updated_at = $5
           WHERE id = $6 AND account_id = $7`,
          [name ?? null, yamlContent ?? null, layout !== undefined, layout ?? null, updatedAt, id, accountId],
        );
        return get(tx, accountId, id);
      });
    },

    delete(accountId, id) {
      return db.transaction(async (tx) => {
        const deleted = (await tx.run('DELETE FROM flows WHERE id = $1 AND account_id = $2', [id, accountId])) === 1;
        if (deleted) await deleteFlowHistory(tx, id);
        return deleted;
      });
    },

    forgetList() {
      // Nothing is cached (see the top of this file).
    },
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
    publishedVersion: Number(row.published_version),
    hasDraft: row.has_draft,
  };
}
