// Password hashing with scrypt (N = 2^17, r = 8, p = 1 by default: slow to guess from a stolen
// hash). Hashing runs on libuv's pool, off the event loop, and through a WorkQueue so only a
// bounded number of 128 MiB, CPU-heavy hashes run at once.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { WorkQueue } from '../concurrency/work-queue.ts';

const KEY_LENGTH = 32;

function scryptAsync(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

function optionsFor(logN: number, r: number, p: number): ScryptOptions {
  const N = 2 ** logN;
  // scrypt needs 128·N·r bytes; Node's default maxmem (32 MiB) is too small for N = 2^17.
  return { N, r, p, maxmem: 128 * N * r * p + 32 * 1024 * 1024 };
}

export class PasswordHasher {
  private readonly queue: WorkQueue;
  /** A hash of a random password, checked against when the email is unknown, so both cases take as long. */
  private decoy: Promise<string> | null = null;

  constructor(
    private readonly logN: number,
    concurrency: number,
    maxWaiting: number,
  ) {
    this.queue = new WorkQueue(concurrency, maxWaiting);
  }

  /** `scrypt$<logN>$<r>$<p>$<salt b64>$<key b64>`: self-describing, so the cost can rise later. */
  hash(password: string): Promise<string> {
    return this.queue.run(async () => {
      const salt = randomBytes(16);
      const key = await scryptAsync(password, salt, optionsFor(this.logN, 8, 1));
      return `scrypt$${this.logN}$8$1$${salt.toString('base64')}$${key.toString('base64')}`;
    });
  }

  verify(password: string, stored: string): Promise<boolean> {
    return this.queue.run(async () => {
      const parts = stored.split('$');
      if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
      const [logN, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
      const salt = Buffer.from(parts[4]!, 'base64');
      const expected = Buffer.from(parts[5]!, 'base64');
      const key = await scryptAsync(password, salt, optionsFor(logN, r, p));
      return key.length === expected.length && timingSafeEqual(key, expected);
    });
  }

  /** Spends the same work as a real check and fails: used when the account does not exist. */
  async verifyAgainstDecoy(password: string): Promise<false> {
    this.decoy ??= this.hash(randomBytes(16).toString('hex'));
    await this.verify(password, await this.decoy);
    return false;
  }
}
