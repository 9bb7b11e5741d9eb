// What an account's flows take up in the store, for the per-account storage quota (docs/api.md#errors):
// the number of flows, and the bytes of every text kept for them — each published version
// (flows.yaml_content is the live one's copy, not counted again) and each draft. History counts
// because every save publishes a new immutable version: were it free, one account could grow
// the database, and with it every snapshot the whole server takes, without limit.
//
// octet_length() reads a text's size from its record header, without loading the text from its
// overflow pages: 200 texts of 300 KiB sum in about 0.1 ms here, against 24 ms for length(),
// which decodes them. So the quota can be checked on the thread that paces audio.

export interface FlowStorageUsage {
  flows: number;
  /** UTF-8 bytes of every version's and draft's YAML. */
  bytes: number;
}

export interface FlowStorageRepository {
  usage(accountId: string): Promise<FlowStorageUsage>;
}
