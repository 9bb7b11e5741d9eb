// What an account's flows take up, on PostgreSQL: the same count as the sql.js repository
// (server/store/repositories/flow-storage.ts): the flows, and the UTF-8 bytes of every version's
// and every draft's YAML. octet_length() is a text's size in bytes in PostgreSQL too.
import type { FlowStorageRepository } from '../repositories/flow-storage.ts';
import type { PgDatabase } from './database.ts';

export function createPgFlowStorageRepository(db: PgDatabase): FlowStorageRepository {
  return {
    async usage(accountId) {
      const row = await db.row<{ flows: number; versions: number; drafts: number }>(
        `SELECT (SELECT COUNT(*) FROM flows WHERE account_id = $1) AS flows,
                (SELECT COALESCE(SUM(octet_length(v.yaml_content)), 0)
                   FROM flows f JOIN flow_versions v ON v.flow_id = f.id WHERE f.account_id = $1) AS versions,
                (SELECT COALESCE(SUM(octet_length(d.yaml_content)), 0)
                   FROM flows f JOIN flow_drafts d ON d.flow_id = f.id WHERE f.account_id = $1) AS drafts`,
        [accountId],
      );
      return { flows: row?.flows ?? 0, bytes: (row?.versions ?? 0) + (row?.drafts ?? 0) };
    },
  };
}
