// Secrets generated on first run and kept in the data dir, readable by the owner only.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Reads `<dataDir>/<name>`, creating it with `bytes` random bytes (mode 0600) when absent. */
export async function loadOrCreateKeyFile(dataDir: string, name: string, bytes = 32): Promise<Buffer> {
  const path = join(dataDir, name);
  try {
    const existing = Buffer.from((await readFile(path, 'utf8')).trim(), 'base64');
    if (existing.length !== bytes) throw new Error(`${path} does not hold a ${bytes}-byte key; restore it from a backup or remove it`);
    return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(bytes);
  try {
    // `wx`: if two processes race here, one fails instead of both writing different keys.
    await writeFile(path, key.toString('base64') + '\n', { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateKeyFile(dataDir, name, bytes);
    throw error;
  }
  await chmod(path, 0o600);
  return key;
}

/** VOXFLOW_JWT_SECRET: at least 32 bytes (HMAC-SHA256 keys shorter than the hash are weak). */
export function decodeConfiguredJwtSecret(base64: string): Buffer {
  const key = Buffer.from(base64, 'base64');
  if (key.length < 32) throw new Error('VOXFLOW_JWT_SECRET must be at least 32 bytes, base64-encoded (e.g. `openssl rand -base64 48`)');
  return key;
}

export function decodeConfiguredKey(base64: string): Buffer {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== 32) throw new Error('VOXFLOW_SECRET_KEY must be 32 bytes, base64-encoded (e.g. `openssl rand -base64 32`)');
  return key;
}
