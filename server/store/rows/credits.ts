// The credits tables' rows as both stores read them (sql.js and PostgreSQL share the schema), and
// how a row becomes the repository's object.

export function checkCents(cents: number): RangeError | null {
  return Number.isSafeInteger(cents) && cents >= 0
    ? null
    : new RangeError(`An amount of credit must be a whole, non-negative number of cents; got ${cents}`);
}
