// What both stores' ledgers check of an amount before they write it.

export function checkCents(cents: number): RangeError | null {
  return Number.isSafeInteger(cents) && cents >= 0
    ? null
    : new RangeError(`An amount of credit must be a whole, non-negative number of cents; got ${cents}`);
}
