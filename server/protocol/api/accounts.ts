// What the account's own endpoints answer: sign-in, API keys, credit, provider settings, named
// secrets. Pure (no Node imports): the server's routes serialize with these and the studio
// derives its types from them.
import { z } from 'zod';

/** Unix time in seconds, fractional. */
export const UnixSeconds = z.number();

export const SignedIn = z.object({ access_token: z.string(), token_type: z.literal('bearer'), email: z.string() });

export const ApiKeyView = z.object({ id: z.string(), label: z.string().nullable(), prefix: z.string(), created_at: UnixSeconds, last_used_at: UnixSeconds.nullable() });
/** The key itself comes only in the answer to the create. */
export const CreatedApiKey = ApiKeyView.extend({ key: z.string() });

export const ProviderKind = z.enum(['stt', 'llm', 'tts']);

export const CreditPart = z.object({
  provider: z.string(),
  /** Whose key serves the part: the server's (charged), the account's own or an embedded provider (free), or nothing. */
  key_source: z.enum(['server', 'account', 'embedded', 'none']),
  rate_per_minute_usd_cents: z.number(),
});
export const CreditsView = z.object({
  balance_usd_cents: z.number(),
  rate_per_minute_usd_cents: z.number(),
  effective_rate_per_minute_usd_cents: z.number(),
  parts: z.object({ stt: CreditPart, llm: CreditPart, tts: CreditPart }),
});

const nullableText = z.string().nullable();
/** Keys are masked (their last characters only); a base URL or model is the account's own, null for the default. */
export const ProvidersView = z.object({
  stt_provider: z.string(),
  stt_api_key: nullableText,
  stt_base_url: nullableText,
  stt_model: nullableText,
  llm_provider: z.string(),
  llm_api_key: nullableText,
  llm_base_url: nullableText,
  llm_model: nullableText,
  tts_provider: z.string(),
  tts_api_key: nullableText,
  tts_base_url: nullableText,
  tts_model: nullableText,
  /** Each carrier's credentials: ids and public keys whole, tokens and API keys masked; null when unset. */
  twilio_account_sid: nullableText,
  twilio_auth_token: nullableText,
  telnyx_api_key: nullableText,
  telnyx_public_key: nullableText,
  telnyx_account_sid: nullableText,
  telnyx_application_sid: nullableText,
  plivo_auth_id: nullableText,
  plivo_auth_token: nullableText,
  /** The SIP endpoint's peers: addresses and CIDR ranges calls are taken from, and digest credentials. */
  sip_allowed_sources: nullableText,
  sip_username: nullableText,
  sip_password: nullableText,
  /** Saved, but something is worth knowing (the provider could not be reached to check the key). */
  warnings: z.array(z.string()).optional(),
});

/** A secret's value is never returned, not even masked. */
export const SecretView = z.object({ name: z.string(), created_at: UnixSeconds, updated_at: UnixSeconds });
