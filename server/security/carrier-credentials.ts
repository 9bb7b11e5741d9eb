// What an account keeps for each phone carrier: which fields, which of them are secrets (sealed
// like provider keys, shown masked), and the shape each must have. Adding a carrier or a field is
// an entry here: the store keeps one row per field whatever the carrier.
//
// Fields are checked for shape only when saved, never against the carrier's API: a request from
// here to Twilio, Telnyx or Plivo would cost a round trip abroad on every save, and a wrong
// credential shows itself at once anyway, in the carrier's signature on the first webhook and in
// its answer to the first REST call.
import { isIP } from 'node:net';
import type { SecretBox } from './secret-box.ts';

export interface CarrierField {
  /** Sealed at rest and shown masked; otherwise kept plain and shown whole. */
  secret: boolean;
  /** Why a value is refused, or null when its shape is right. */
  problem(value: string): string | null;
}

const matching = (pattern: RegExp, expected: string) => (value: string) => (pattern.test(value) ? null : `must be ${expected}`);
/** Comma-separated IPv4 or IPv6 addresses and CIDR ranges (`203.0.113.7, 198.51.100.0/24`). */
function addressList(value: string): string | null {
  const entries = value.split(',').map((v) => v.trim()).filter(Boolean);
  if (entries.length === 0) return 'must name at least one address or CIDR range';
  const bad = entries.find((entry) => !parseSource(entry));
  return bad ? `must be addresses or CIDR ranges separated by commas (e.g. 203.0.113.7, 198.51.100.0/24); "${bad.slice(0, 60)}" is neither` : null;
}

/** One allowed SIP source: an address or a CIDR range, as node:net's BlockList takes it. */
export function parseSource(entry: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const [address, prefixText, ...rest] = entry.trim().split('/');
  if (!address || rest.length > 0) return null;
  const family = isIP(address) === 4 ? 'ipv4' : isIP(address) === 6 ? 'ipv6' : null;
  if (!family) return null;
  const max = family === 'ipv4' ? 32 : 128;
  if (prefixText === undefined) return { address, prefix: max, family };
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) return null;
  return { address, prefix: Number(prefixText), family };
}

const opaque = (value: string) => (value.length >= 8 && value.length <= 512 && !/\s/.test(value) ? null : 'must be 8 to 512 characters without spaces');

/** A base64 Ed25519 public key: exactly 32 bytes once decoded. */
function ed25519PublicKey(value: string): string | null {
  const isBase64 = /^[A-Za-z0-9+/]+={0,2}$/.test(value);
  return isBase64 && Buffer.from(value, 'base64').length === 32 ? null : 'must be the base64 of a 32-byte Ed25519 public key (Telnyx portal: Keys & Credentials, Public Key)';
}

export const CARRIER_FIELDS = {
  twilio: {
    account_sid: { secret: false, problem: matching(/^AC[0-9a-f]{32}$/, 'AC followed by 32 lowercase hex digits (Twilio console: Account Info)') },
    auth_token: { secret: true, problem: opaque },
  },
  telnyx: {
    api_key: { secret: true, problem: opaque },
    public_key: { secret: false, problem: ed25519PublicKey },
    // TeXML's REST paths name the account and the TeXML application that places calls; a call
    // that is only answered needs neither.
    account_sid: { secret: false, problem: matching(/^[A-Za-z0-9-]{8,64}$/, 'the TeXML account id (Telnyx portal: Call Control, TeXML)') },
    application_sid: { secret: false, problem: matching(/^[A-Za-z0-9-]{4,64}$/, 'the id of the TeXML application that places calls') },
  },
  plivo: {
    auth_id: { secret: false, problem: matching(/^[MS]A[A-Z0-9]{18}$/, 'MA or SA followed by 18 capital letters or digits (Plivo console: Overview)') },
    auth_token: { secret: true, problem: opaque },
  },
  // A PBX or trunk calling the SIP endpoint: calls are taken from the listed addresses, and from
  // anywhere else only with digest authentication under the username and password, when set.
  sip: {
    allowed_sources: { secret: false, problem: addressList },
    username: { secret: false, problem: matching(/^[A-Za-z0-9._~+-]{1,64}$/, 'letters, digits and . _ ~ + - (at most 64)') },
    password: { secret: true, problem: opaque },
  },
} as const satisfies Record<string, Record<string, CarrierField>>;

export type CredentialCarrier = keyof typeof CARRIER_FIELDS;

/** Every carrier field as the API names it: `twilio_auth_token`, … */
export const CARRIER_FIELD_NAMES = Object.entries(CARRIER_FIELDS).flatMap(([carrier, fields]) =>
  Object.entries(fields).map(([field, spec]) => ({ name: `${carrier}_${field}`, carrier: carrier as CredentialCarrier, field, spec: spec as CarrierField })),
);

/** What a carrier secret is sealed for: this account, carrier and field only, so a copied row does not open. */
export function carrierCredentialContext(accountId: string, carrier: string, field: string): string {
  return `carrier:${accountId}:${carrier}:${field}`;
}

/** A stored field as the store hands it back: sealed or plain. */
export interface SealedCarrierField {
  carrier: string;
  field: string;
  valueEnc: string | null;
  valuePlain: string | null;
}

/**
 * The carrier's credentials of an account in clear, by field (`{account_sid, auth_token}`), for
 * the call that needs them and for nothing else (never logged, never stored). Fields of other
 * carriers are left out. Throws when a sealed field does not open (the server's secret key changed).
 */
export function openCarrierCredentials(box: SecretBox, accountId: string, carrier: string, stored: readonly SealedCarrierField[]): Record<string, string> {
  const open: Record<string, string> = {};
  for (const row of stored) {
    if (row.carrier !== carrier) continue;
    open[row.field] = row.valueEnc !== null ? box.open(row.valueEnc, carrierCredentialContext(accountId, carrier, row.field)) : row.valuePlain!;
  }
  return open;
}

/** What the call glue calls: `store.providers` reads them (sealed), this opens them. */
export async function carrierCredentials(
  providers: { carrierCredentials(accountId: string, carrier?: string): Promise<SealedCarrierField[]> },
  box: SecretBox,
  accountId: string,
  carrier: string,
): Promise<Record<string, string>> {
  return openCarrierCredentials(box, accountId, carrier, await providers.carrierCredentials(accountId, carrier));
}
