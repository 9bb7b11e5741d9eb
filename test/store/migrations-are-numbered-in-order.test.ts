// Migrations are applied by number, above the one a database has (recovery.ts): two of one
// number, or a gap, would leave a database that upgraded in between without one of them.
import { expect, test } from 'vitest';
import { MIGRATIONS } from '../../server/store/sqljs/migrations.ts';

test('migrations are numbered 1, 2, 3 … in order, each once', () => {
  expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
});
