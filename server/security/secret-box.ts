// Provider keys at rest: AES-256-GCM with a random IV, the account and field bound in as
// additional data so a ciphertext copied to another account or field does not decrypt.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';

export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the secret key must be 32 bytes');
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join(':');
  }

  /** Throws when the ciphertext was tampered with, sealed for another context, or under another key. */
  open(sealed: string, context: string): string {
    const [version, iv, tag, body] = sealed.split(':');
    if (version !== VERSION || !iv || !tag || body === undefined) throw new Error('unrecognised sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
  }
}

/** What a secret is sealed for (SecretBox context): this account and name only, so a copied row does not open. */
export function secretContext(accountId: string, name: string): string {
  return `secret:${accountId}:${name}`;
}

/** `sk-…abcd`: enough to recognise a key, never enough to use it. */
export function maskSecret(secret: string): string {
  if (secret.length < 12) return '…';
  const dash = secret.indexOf('-');
  const head = dash > 0 && dash <= 4 ? secret.slice(0, dash + 1) : secret.slice(0, 3);
  return `${head}…${secret.slice(-4)}`;
}
