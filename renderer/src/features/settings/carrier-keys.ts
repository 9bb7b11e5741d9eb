// The carriers' credentials as the provider-keys section shows them (docs/phone-calls.md): which
// fields each carrier has, which are secrets (only ever shown masked, as the server answers them)
// and where its console shows each. The names are the API's own, typed from its schema. Pure.
import type { CarrierField } from '../../lib/api-types.ts';

export interface CarrierKeyField {
  name: CarrierField;
  label: string;
  /** Sealed by the server and read back masked: typed into an empty password field, never shown. */
  secret: boolean;
  placeholder: string;
}

export interface CarrierKeys {
  carrier: 'twilio' | 'telnyx' | 'plivo' | 'sip';
  title: string;
  where: string;
  fields: CarrierKeyField[];
}

export const CARRIER_KEYS: CarrierKeys[] = [
  {
    carrier: 'twilio',
    title: 'Twilio',
    where: 'Twilio console → Account Info. The auth token checks the signature of every request Twilio sends.',
    fields: [
      { name: 'twilio_account_sid', label: 'Account SID', secret: false, placeholder: 'AC followed by 32 hex digits' },
      { name: 'twilio_auth_token', label: 'Auth token', secret: true, placeholder: 'Paste the auth token' },
    ],
  },
  {
    carrier: 'telnyx',
    title: 'Telnyx',
    where: 'Telnyx portal → Keys & Credentials (API key, public key); the TeXML application for hang-ups, transfers and outbound calls.',
    fields: [
      { name: 'telnyx_api_key', label: 'API key', secret: true, placeholder: 'Paste the API key' },
      { name: 'telnyx_public_key', label: 'Public key', secret: false, placeholder: 'base64, 32 bytes' },
      { name: 'telnyx_account_sid', label: 'TeXML account id', secret: false, placeholder: 'For outbound calls and transfers' },
      { name: 'telnyx_application_sid', label: 'TeXML application id', secret: false, placeholder: 'For outbound calls and transfers' },
    ],
  },
  {
    carrier: 'plivo',
    title: 'Plivo',
    where: 'Plivo console → Overview.',
    fields: [
      { name: 'plivo_auth_id', label: 'Auth ID', secret: false, placeholder: 'MA or SA and 18 characters' },
      { name: 'plivo_auth_token', label: 'Auth token', secret: true, placeholder: 'Paste the auth token' },
    ],
  },
  {
    carrier: 'sip',
    title: 'SIP (a PBX or trunk)',
    where: 'Calls sent straight to this server over SIP (docs/sip.md): taken from these addresses, or from anywhere with the username and password (digest).',
    fields: [
      { name: 'sip_allowed_sources', label: 'Allowed sources', secret: false, placeholder: 'e.g. 203.0.113.7, 198.51.100.0/24' },
      { name: 'sip_username', label: 'Username', secret: false, placeholder: 'For digest authentication' },
      { name: 'sip_password', label: 'Password', secret: true, placeholder: 'Paste the password' },
    ],
  },
];
