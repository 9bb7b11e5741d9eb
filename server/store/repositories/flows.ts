import type { Database } from '../database.ts';
import { newId } from '../ids.ts';

export interface Flow {
  id: string;
  accountId: string;
  name: string;
  yamlContent: string;
  createdAt: number;
  updatedAt: number;
}

/** A flow list item: the list never carries the YAML. */
export interface FlowSummary {
  id: string;
  name: string;
  createdAt: number;
}

export interface FlowChanges {
  name?: string;
  yamlContent?: string;
}

/** Every method is scoped to an account: another account's flow reads as absent. */
export interface FlowsRepository {
  create(input: { accountId: string; name: string; yamlContent: string }): Promise<Flow>;
  /** Oldest first. */
  list(accountId: string): FlowSummary[];
  get(accountId: string, id: string): Flow | null;
  update(accountId: string, id: string, changes: FlowChanges): Promise<Flow | null>;
  delete(accountId: string, id: string): Promise<boolean>;
}

interface FlowRow {
  id: string;
  account_id: string;
  name: string;
  yaml_content: string;
  created_at: number;
  updated_at: number;
}

export function createFlowsRepository(db: Database): FlowsRepository {
  const get = (accountId: string, id: string): Flow | null => {
    const row = db.get<FlowRow>('SELECT * FROM flows WHERE id = ? AND account_id = ?', [id, accountId]);
    return row ? toFlow(row) : null;
  };

  return {
    create({ accountId, name, yamlContent }) {
      const now = db.now();
      const flow: Flow = { id: newId(), accountId, name, yamlContent, createdAt: now, updatedAt: now };
      return db.write((tx) => {
        tx.run(
          'INSERT INTO flows (id, account_id, name, yaml_content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
          [flow.id, flow.accountId, flow.name, flow.yamlContent, flow.createdAt, flow.updatedAt],
        );
        return flow;
      });
    },

    list(accountId) {
      return db
        .all<Pick<FlowRow, 'id' | 'name' | 'created_at'>>(
          'SELECT id, name, created_at FROM flows WHERE account_id = ? ORDER BY created_at, rowid',
          [accountId],
        )
        .map((row) => ({ id: row.id, name: row.name, createdAt: row.created_at }));
    },

    get,

    update(accountId, id, { name, yamlContent }) {
      const updatedAt = db.now();
      return db.write((tx) => {
        // COALESCE keeps a field that was not given; both fields are NOT NULL, so null never means "clear".
        const changed = tx.run(
          `UPDATE flows SET name = COALESCE(?, name), yaml_content = COALESCE(?, yaml_content), updated_at = ?
           WHERE id = ? AND account_id = ?`,
          [name ?? null, yamlContent ?? null, updatedAt, id, accountId],
        );
        return changed === 1 ? get(accountId, id) : null;
      });
    },

    delete(accountId, id) {
      return db.write((tx) => tx.run('DELETE FROM flows WHERE id = ? AND account_id = ?', [id, accountId]) === 1);
    },
  };
}

function toFlow(row: FlowRow): Flow {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    yamlContent: row.yaml_content,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
