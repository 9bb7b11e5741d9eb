// Where the server may be sent by an account: a URL an account gives (its own model server's base
// URL) must not point the server at its own network (SSRF: cloud metadata at 169.254.169.254, an
// admin port on 127.0.0.1, a database on 10.x). Names are resolved and every address checked.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/** Loopback, private, link-local, unique-local, unspecified, CGNAT and the like: not the public internet. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  // The same, as URLs write it: [::ffff:127.0.0.1] becomes ::ffff:7f00:1.
  const mappedHex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  const fromHex = (high: string, low: string) => {
    const [h, l] = [parseInt(high, 16), parseInt(low, 16)];
    return `${h >> 8}.${h & 255}.${l >> 8}.${l & 255}`;
  };
  const ip = mapped ? mapped[1]! : mappedHex ? fromHex(mappedHex[1]!, mappedHex[2]!) : address;
  if (isIP(ip) === 4) {
    const [a, b] = ip.split('.').map(Number) as [number, number, number, number];
    return a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || a >= 224;
  }
  const v6 = ip.toLowerCase();
  return v6 === '::' || v6 === '::1' || v6.startsWith('fc') || v6.startsWith('fd') || v6.startsWith('fe8') || v6.startsWith('fe9') || v6.startsWith('fea') || v6.startsWith('feb') || v6.startsWith('ff');
}

/** Null when every address the URL's host resolves to is public; else why not. */
export async function privateTargetProblem(url: string): Promise<string | null> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((entry) => entry.address);
  } catch {
    return `${host} cannot be resolved`;
  }
  const inside = addresses.find(isPrivateAddress);
  return inside ? `${host} is an address of the server's own network (${inside})` : null;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A DNS lookup that refuses the server's own network unless allowed, for the connection's own
 * lookup: a name that resolved to a public address when it was saved may resolve to 127.0.0.1
 * later (DNS rebinding). Webhook deliveries and flow http tools connect through it.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const inside = allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
      if (inside) return callback(Object.assign(new Error(`${hostname} resolves to an address of the server's own network (${inside.address})`), { code: 'EPRIVATE' }), '');
      if ((options as LookupAllOptions).all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}
