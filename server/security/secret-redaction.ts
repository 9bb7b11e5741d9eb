// Secrets a request carried, taken back out of what its receiver answered. A receiver may echo
// the request (a debugging endpoint, an error page that prints the headers), and whatever it
// answers is kept and shown: the session's timeline and detail, its webhooks, the studio, the
// model's context. So every secret value a request carried is replaced wherever it appears in
// the answer, also in the forms a receiver plausibly echoes it in: as is, URL-encoded (%XX in
// either case, or + for spaces), JSON-escaped, base64 (standard or URL-safe, with or without
// padding), and for an `Authorization: Basic` header the `user:password` it encodes and the
// password alone.
//
// Values shorter than MIN_REDACTED_LENGTH are left alone on their own (a two-letter "secret"
// would blank out every word it occurs in, and is no secret); the header value holding one is
// still redacted whole.

export const REDACTED = '[redacted]';
export const MIN_REDACTED_LENGTH = 4;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function formsOf(value: string): string[] {
  const forms = [value];
  const encoded = encodeURIComponent(value);
  if (encoded !== value) {
    forms.push(encoded);
    if (encoded.includes('%20')) forms.push(encoded.replace(/%20/g, '+'));
  }
  const json = JSON.stringify(value).slice(1, -1);
  if (json !== value) forms.push(json);
  const base64 = Buffer.from(value, 'utf8').toString('base64');
  forms.push(base64.replace(/=+$/, ''), Buffer.from(value, 'utf8').toString('base64url'));
  return forms;
}

/** The sensitive strings of one filled header value: itself, and what a Basic credential encodes. */
function headerForms(value: string): string[] {
  const out = [value];
  const basic = /^\s*Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(value);
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    out.push(basic[1]!, decoded);
    const colon = decoded.indexOf(':');
    if (colon >= 0) out.push(decoded.slice(colon + 1));
  }
  const bearer = /^\s*(?:Bearer|Token)\s+(\S+)\s*$/i.exec(value);
  if (bearer) out.push(bearer[1]!);
  return out;
}

export interface SecretRedactor {
  /** The text with every form of every secret replaced by [redacted]. */
  text(text: string): string;
  /** A parsed JSON answer with every string (keys too) redacted. */
  json(value: unknown): unknown;
}

/**
 * A redactor for the secret values a request carried (`secrets`) and the header values they were
 * filled into (`headerValues`), whose whole values are redacted too.
 */
export function secretRedactor(secrets: Iterable<string>, headerValues: Iterable<string> = []): SecretRedactor {
  const sensitive = new Set<string>();
  for (const value of secrets) if (value.length >= MIN_REDACTED_LENGTH) sensitive.add(value);
  for (const header of headerValues) for (const value of headerForms(header)) if (value.trim().length >= MIN_REDACTED_LENGTH) sensitive.add(value);
  const forms = [...new Set([...sensitive].flatMap(formsOf))].filter((form) => form.length >= MIN_REDACTED_LENGTH);
  // Longest first, so a value inside a longer form does not leave the rest of that form behind.
  forms.sort((a, b) => b.length - a.length);
  // One pattern, matched without regard to case: %2f and %2F are the same escape, and a case
  // that differs elsewhere only redacts a little more than needed.
  const pattern = forms.length ? new RegExp(forms.map(escapeRegExp).join('|'), 'gi') : null;
  const text = (input: string): string => (pattern ? input.replace(pattern, REDACTED) : input);
  const json = (value: unknown): unknown => {
    if (typeof value === 'string') return text(value);
    if (Array.isArray(value)) return value.map(json);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [text(key), json(inner)]));
    return value;
  };
  return pattern ? { text, json } : { text: (t) => t, json: (v) => v };
}
