// Where an account may send the server: a URL an account gives (a webhook endpoint, a flow's http
// tool, its own model server's base URL) must not point the server at its own network or its own
// host (SSRF: cloud metadata at 169.254.169.254, an admin port on 127.0.0.1, a database on 10.x,
// a service listening on every interface reached through the host's public address).
//
// An allow-list, not a deny-list: an address is allowed when it is globally routable unicast
// (ipaddr.js classifies the special ranges: documentation, benchmarking, shared address space,
// multicast, reserved, NAT64, 6to4, Teredo…) and is none of this host's own interface addresses,
// whatever their range. IPv6 must also be in 2000::/3, the only block allocated for global
// unicast, which leaves out IPv4-compatible `::a.b.c.d` and the like. An IPv4-mapped
// `::ffff:a.b.c.d` is judged as the IPv4 address it maps to.
//
// The operator's opt-in (--allow-private-webhooks, on in the desktop app) adds loopback and the
// private networks (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7); link-local, multicast and
// reserved addresses stay refused, and so do this host's own non-loopback addresses: what runs on
// this host is reached over loopback, where a deployment that allows it means to.
//
// Names are resolved and every address checked, and the connection's own lookup checks again
// (guardedLookup), so a name that resolves somewhere else later (DNS rebinding) is caught where
// the socket connects.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';

/** What the operator allows beyond the public internet. */
export interface OutboundPolicy {
  /** Loopback and private networks (--allow-private-webhooks; the desktop app). */
  allowPrivate: boolean;
}

/** Ranges the operator's opt-in allows (ipaddr.js's names). */
const PRIVATE_RANGES = new Set(['loopback', 'private', 'carrierGradeNat', 'uniqueLocal']);

/** What each refused range is, for the message a user reads. */
const RANGE_WORDS: Record<string, string> = {
  loopback: 'loopback',
  private: 'a private network',
  carrierGradeNat: 'shared address space (carrier-grade NAT)',
  uniqueLocal: 'a unique-local (private) network',
  linkLocal: 'link-local, where cloud metadata services answer',
  multicast: 'multicast',
  broadcast: 'broadcast',
  unspecified: 'the unspecified address, which reaches this host',
  reserved: 'a reserved or documentation range',
  benchmarking: 'the benchmarking range',
  as112: 'an AS112 sink',
  amt: 'an AMT relay range',
  rfc6052: 'NAT64, an IPv4 address inside IPv6',
  rfc6145: 'an IPv4-translated address',
  '6to4': '6to4, an IPv4 address inside IPv6',
  teredo: 'Teredo, an IPv4 address inside IPv6',
  discard: 'the discard range',
  deprecatedSiteLocal: 'site-local',
  notGlobal: 'not in the global unicast block (2000::/3); IPv4-compatible addresses are here',
};

const OWN_ADDRESSES_TTL_MS = 5_000;
let ownCache: { at: number; addresses: ReadonlySet<string> } | null = null;

/** Writes an address one way, so that two spellings of one address compare equal. */
function canonical(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) return (address as ipaddr.IPv6).toIPv4Address().toString();
  return address.toNormalizedString();
}

/**
 * This host's own addresses, loopback aside (os.networkInterfaces(); read again every few seconds,
 * as interfaces come and go).
 */
export function ownAddresses(): ReadonlySet<string> {
  const now = performance.now();
  if (ownCache && now - ownCache.at < OWN_ADDRESSES_TTL_MS) return ownCache.addresses;
  const addresses = new Set<string>();
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      if (entry.internal) continue;
      const bare = entry.address.replace(/%.*$/, '');
      if (isIP(bare) !== 0) addresses.add(canonical(parseAddress(bare)));
    }
  }
  ownCache = { at: now, addresses };
  return addresses;
}

/**
 * The address parsed. IPv6 goes through the URL parser's serialization first: ipaddr.js reads
 * an IPv4-compatible `::a.b.c.d` as if it were the IPv4-mapped `::ffff:a.b.c.d`, and so would
 * judge `::127.0.0.1` as loopback and `::8.8.8.8` as public, while it is neither.
 */
function parseAddress(bare: string): ipaddr.IPv4 | ipaddr.IPv6 {
  return ipaddr.parse(isIP(bare) === 6 ? new URL(`http://[${bare}]/`).hostname.slice(1, -1) : bare);
}

/** The range an address is in (ipaddr.js's names), with IPv6 outside 2000::/3 as 'notGlobal'. */
function rangeOf(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  if (address.kind() === 'ipv4') return (address as ipaddr.IPv4).range();
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range();
  const range = v6.range();
  if (range === 'unicast' && !v6.match(ipaddr.IPv6.parse('2000::'), 3)) return 'notGlobal';
  return range;
}

/**
 * Null when the server may connect to `address` (an IP address), else what it is ("an address of
 * the server's own network (loopback)"). `own` is this host's addresses (the default reads the
 * interfaces).
 */
export function outboundAddressRefusal(address: string, policy: OutboundPolicy, own: ReadonlySet<string> = ownAddresses()): string | null {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIP(bare) === 0 || !ipaddr.isValid(bare)) return 'not an IP address';
  const parsed = parseAddress(bare);
  // This host's own addresses whatever their range; loopback is not among them (where allowed, it
  // is how a deployment reaches what runs on its own host).
  if (own.has(canonical(parsed))) return "one of this server's own addresses";
  const range = rangeOf(parsed);
  if (range === 'unicast' || (policy.allowPrivate && PRIVATE_RANGES.has(range))) return null;
  const words = RANGE_WORDS[range] ?? range;
  return PRIVATE_RANGES.has(range) ? `an address of the server's own network (${words})` : `not a public internet address (${words})`;
}

/** Null when the server may connect to `address`, else why not, naming it. */
export function outboundAddressProblem(address: string, policy: OutboundPolicy, own?: ReadonlySet<string>): string | null {
  const refusal = outboundAddressRefusal(address, policy, own);
  return refusal ? `${address} is ${refusal}` : null;
}

/** Why `host` may not be connected to at `address`, naming both. */
function resolvedProblem(host: string, address: string, policy: OutboundPolicy): string | null {
  const refusal = outboundAddressRefusal(address, policy);
  if (!refusal) return null;
  return host === address ? `${address} is ${refusal}` : `${host} resolves to ${address}, ${refusal}`;
}

/**
 * Null when every address the URL's host resolves to may be connected to; else why not. A name
 * that does not resolve is refused, unless `unresolved: 'allow'` (the connection's lookup checks
 * it whenever it does).
 */
export async function outboundTargetProblem(url: string, policy: OutboundPolicy, options: { unresolved?: 'refuse' | 'allow' } = {}): Promise<string | null> {
  return (await outboundTargetCheck(url, policy, options))?.problem ?? null;
}

/**
 * outboundTargetProblem, saying also which kind of problem: a name that cannot be resolved (a
 * typo, a record still to come) is not an address that is refused, and a user fixes it otherwise.
 */
export async function outboundTargetCheck(
  url: string,
  policy: OutboundPolicy,
  options: { unresolved?: 'refuse' | 'allow' } = {},
): Promise<{ kind: 'unresolvable' | 'refused'; problem: string } | null> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((entry) => entry.address);
  } catch {
    return options.unresolved === 'allow' ? null : { kind: 'unresolvable', problem: `${host} cannot be resolved` };
  }
  for (const address of addresses) {
    const problem = resolvedProblem(host, address, policy);
    if (problem) return { kind: 'refused', problem };
  }
  return null;
}

/**
 * Why a URL's host, when it is an IP address, may not be connected to (null: allowed, or a name,
 * which the connection's lookup checks). An IP literal is connected to without a lookup.
 */
export function literalTargetProblem(url: URL, policy: OutboundPolicy): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? outboundAddressProblem(host, policy) : null;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A DNS lookup that refuses what the policy refuses, for the connection's own lookup: a name that
 * resolved to a public address when it was saved may resolve to 127.0.0.1 later (DNS rebinding).
 * Webhook deliveries and flow http tools connect through it. Any refused address refuses the name.
 */
export function guardedLookup(policy: OutboundPolicy) {
  return (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      for (const entry of addresses) {
        const problem = resolvedProblem(hostname, entry.address, policy);
        if (problem) return callback(Object.assign(new Error(problem), { code: 'EPRIVATE' }), '');
      }
      if ((options as LookupAllOptions).all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}

/** Whether a listening host is loopback only (the desktop app, a server behind a proxy on the same machine). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  return isIP(bare) !== 0 && rangeOf(parseAddress(bare)) === 'loopback';
}

/** Ranges the server never sends ICE connectivity checks to: nothing a caller is reached at. */
const NEVER_PROBED = new Set(['linkLocal', 'multicast', 'broadcast', 'unspecified', 'notGlobal']);

/**
 * Null when the server may send ICE connectivity checks to a remote candidate's address, else
 * why not. A caller's candidates name addresses the server then sends STUN to, so a client could
 * point it at cloud metadata (169.254.169.254), a multicast group, or a service on the server's
 * own loopback. Loopback is a candidate only where the server itself listens on loopback (the
 * desktop app: the studio on the same machine). Private and other ranges are the callers' own
 * networks, which ICE is for. A `.local` name is an mDNS name, resolved on the local link only;
 * any other name would be resolved through DNS, to anything, and is refused.
 */
export function iceCandidateRefusal(address: string, options: { loopbackDeployment: boolean }): string | null {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIP(bare) === 0) return /^[a-z0-9-]+(\.[a-z0-9-]+)*\.local\.?$/i.test(bare) ? null : 'a host name, not an address';
  const range = rangeOf(parseAddress(bare));
  if (NEVER_PROBED.has(range)) return RANGE_WORDS[range] ?? range;
  if (range === 'loopback' && !options.loopbackDeployment) return 'loopback, and this server does not listen on loopback only';
  return null;
}
