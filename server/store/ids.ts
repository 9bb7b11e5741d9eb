import { randomBytes } from 'node:crypto';

/** An opaque, URL-safe, unguessable id (128 random bits), made in JS so the journal can replay it. */
export function newId(): string {
  return randomBytes(16).toString('base64url');
}
