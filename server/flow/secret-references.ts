// `{secret.NAME}` in an http tool's header values: where the account's stored secret NAME goes
// when the engine calls the tool. The document names a secret and never holds it, so a flow can
// be shared, versioned and shown in the studio without leaking a credential.

/** The account secret an http tool's requests are signed with (Standard Webhooks, like webhooks). */
export const TOOL_SIGNING_SECRET = 'tool_signing_secret';

/** What `/v1/secrets` accepts as a name, and what a reference may name. */
export const SECRET_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

const REFERENCE = /\{secret\.([A-Za-z0-9_-]{1,64})\}/g;

/** The secret names a text refers to, in order, each once. */
export function secretReferences(text: string): string[] {
  return [...new Set([...text.matchAll(REFERENCE)].map((match) => match[1]!))];
}

/**
 * The text with each reference replaced by its secret; `missing` lists the names the account has
 * no secret for (their references are left out, so no half-made credential is sent).
 */
export function fillSecretReferences(text: string, secretOf: (name: string) => string | undefined): { text: string; missing: string[] } {
  const missing: string[] = [];
  const filled = text.replace(REFERENCE, (_whole, name: string) => {
    const value = secretOf(name);
    if (value === undefined) {
      if (!missing.includes(name)) missing.push(name);
      return '';
    }
    return value;
  });
  return { text: filled, missing };
}
