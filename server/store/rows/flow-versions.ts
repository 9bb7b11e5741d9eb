// The flow-versions tables' rows as both stores read them (sql.js and PostgreSQL share the schema), and
// how a row becomes the repository's object.
import type { VersionAuthor } from '../repositories/flow-versions.ts';

export interface VersionRow {
  flow_id: string;
  number: number;
  yaml_content: string;
  document_version: string | null;
  note: string;
  created_at: number;
  created_by_kind: string | null;
  created_by_key: string | null;
}

export interface DraftRow {
  flow_id: string;
  yaml_content: string;
  base_version: number;
  etag: string;
  updated_at: number;
}

export const publishedEtag = (version: number) => `v${version}`;

export function toAuthor(kind: string | null, key: string | null): VersionAuthor | null {
  if (kind === 'studio') return { kind: 'studio' };
  if (kind === 'api_key' && key) return { kind: 'api_key', apiKeyId: key };
  return null;
}
