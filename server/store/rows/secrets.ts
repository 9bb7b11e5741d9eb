// The secrets tables' rows as both stores read them (sql.js and PostgreSQL share the schema), and
// how a row becomes the repository's object.

export interface SecretRow {
  name: string;
  value_enc: string;
  created_at: number;
  updated_at: number;
}
