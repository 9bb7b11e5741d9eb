import { pooledRandomBytes } from '../security/opaque-tokens.ts';

/** An opaque, URL-safe, unguessable id (128 random bits), made in JS so the journal can replay it. */
export function newId(): string {
  return pooledRandomBytes(16).toString('base64url');
}
