// The flow-tests tables' rows as both stores read them (sql.js and PostgreSQL share the schema), and
// how a row becomes the repository's object.
import type { FlowTestRecord } from '../repositories/flow-tests.ts';

export interface TestRow {
  id: string;
  account_id: string;
  flow_id: string;
  name: string;
  yaml_content: string;
  created_at: number;
  updated_at: number;
}

export const toTest = (row: TestRow): FlowTestRecord => ({
  id: row.id,
  accountId: row.account_id,
  flowId: row.flow_id,
  name: row.name,
  yamlContent: row.yaml_content,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});
