// What an account's flows take up in the store, for the per-account storage quota (issue 14):
// the number of flows, and the bytes of every text kept for them — each published version
// (flows.yaml_content is the live one's copy, not counted again) and each draft. History counts
// because every save publishes a new immutable version: were it free, one account could grow
// the database, and with it every snapshot the whole server takes, without limit.
//
// octet_length() reads a text's size from its record header, without loading the text from its
// overflow pages: 200 texts of 300 KiB sum in about 0.1 ms here, against 24 ms for length(),
// which decodes them. So the quota can be checked on the thread that paces audio.
import type { Database } from '../database.ts';

export interface FlowStorageUsage {
  flows: number;
  /** UTF-8 bytes of every version's and draft's YAML. */
  bytes: number;
}

export interface FlowStorageRepository {
  usage(accountId: string): Promise<FlowStorageUsage>;
}

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
