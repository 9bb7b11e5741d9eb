// The hosted API's shapes as the studio sees them. Pure types, apart from api.ts (which touches
// sessionStorage), so pure helpers and their Node-side unit tests can import them.
import type { Diagnostic } from '../../../server/flow/types.ts';

export interface ApiFailure {
  ok: false;
  status: number;
  code: string;
  message: string;
  details: unknown;
}
export type ApiResult<T> = { ok: true; value: T } | ApiFailure;

/** Times are Unix seconds, as the API sends them. */
export interface FlowSummary { id: string; name: string; created_at: number; updated_at: number }
/** Where the studio draws each state; kept beside the YAML by the server, never inside it. */
export interface FlowLayout { positions: Record<string, { x: number; y: number }> }
export interface FlowRecord extends FlowSummary { yaml_content: string; layout: FlowLayout | null; diagnostics?: Diagnostic[] }
export interface ApiKeyView { id: string; label: string | null; prefix: string; created_at: number; last_used_at: number | null }
export interface CreatedApiKey extends ApiKeyView { key: string }
export interface SessionView {
  id: string;
  token_prefix: string;
  flow_id: string | null;
  mode: 'assistant' | 'flow';
  transport: string | null;
  /** created, connected, ended, or expired (a token that can no longer connect). */
  status: string;
  created_at: number;
  /** When an unclaimed token stops working; null once claimed. */
  expires_at: number | null;
  started_at: number | null;
  ended_at: number | null;
  duration_secs: number | null;
  end_reason: string | null;
  credits_charged_usd_cents: number;
}
export interface CreditsView { balance_usd_cents: number; rate_per_minute_usd_cents: number; effective_rate_per_minute_usd_cents: number }
export type ProviderKind = 'stt' | 'llm' | 'tts';
export type ProvidersView = Record<`${ProviderKind}_provider`, string | null> & Record<`${ProviderKind}_api_key`, string | null>;
export type ProvidersPatch = Partial<Record<`${ProviderKind}_provider` | `${ProviderKind}_api_key`, string | null>>;
export interface Capabilities { [key: string]: unknown }
