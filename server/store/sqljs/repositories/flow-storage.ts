// The embedded store's (sql.js) flow-storage repository; its interface and types are in ../../repositories/flow-storage.ts.
import type { Database } from '../database.ts';
import type { FlowStorageRepository } from '../../repositories/flow-storage.ts';

export function createFlowStorageRepository(db: Database): FlowStorageRepository {
  return {
    async usage(accountId) {
      const row = db.get<{ flows: number; versions: number; drafts: number }>(
        `SELECT (SELECT COUNT(*) FROM flows WHERE account_id = ?1) AS flows,
                (SELECT COALESCE(SUM(octet_length(v.yaml_content)), 0)
                   FROM flows f JOIN flow_versions v ON v.flow_id = f.id WHERE f.account_id = ?1) AS versions,
                (SELECT COALESCE(SUM(octet_length(d.yaml_content)), 0)
                   FROM flows f JOIN flow_drafts d ON d.flow_id = f.id WHERE f.account_id = ?1) AS drafts`,
        [accountId],
      );
      return { flows: row?.flows ?? 0, bytes: (row?.versions ?? 0) + (row?.drafts ?? 0) };
    },
  };
}
