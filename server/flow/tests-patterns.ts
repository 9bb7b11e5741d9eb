// How a flow test's text expectations match (`says`, `not_says`, `card`, `prompt`): written as
// `/regex/flags`, or as plain text found case-insensitively anywhere; and how its values compare
// (as text, so YAML's 1 and the model's "1" are equal). Pure: the studio lints tests with it.

const REGEX_LITERAL = /^\/(.*)\/([a-z]*)$/s;

/** Why a `/regex/flags` expectation cannot be compiled; null for a valid one or for plain text. */
export function patternProblem(text: string): string | null {
  const literal = REGEX_LITERAL.exec(text);
  if (!literal) return null;
  try {
    new RegExp(literal[1]!, literal[2]);
    return null;
  } catch (error) {
    return `${text} is not a valid regular expression (${error instanceof Error ? error.message : String(error)})`;
  }
}

/** Whether `actual` matches a `says`-style pattern: `/regex/flags`, or text found case-insensitively. */
export function matchesPattern(pattern: string, actual: string): boolean {
  const literal = REGEX_LITERAL.exec(pattern);
  if (literal) return new RegExp(literal[1]!, literal[2]).test(actual);
  return actual.toLowerCase().includes(pattern.toLowerCase());
}

/** Values compare as text (see the top of this file). */
export function sameValue(expected: unknown, actual: unknown): boolean {
  if (actual === undefined || actual === null) return false;
  const text = (v: unknown) => (typeof v === 'object' ? JSON.stringify(v) : String(v));
  return text(expected) === text(actual);
}
