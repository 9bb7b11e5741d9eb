// The hosted API's shapes as the studio sees them. Pure types, apart from api.ts (which touches
// sessionStorage), so pure helpers and their Node-side unit tests can import them.
import type { Diagnostic } from '../../../server/flow/types.ts';
import type { FlowCoverage } from '../../../server/flow/tests-coverage.ts';
import type { TestDiagnostic } from '../../../server/flow/tests-format.ts';

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
export interface FlowRecord extends FlowSummary {
  /** The published version's text: what sessions started by a backend run. */
  yaml_content: string;
  layout: FlowLayout | null;
  diagnostics?: Diagnostic[];
  /** Servers before drafts and versions do not send these. */
  published_version?: number;
  has_draft?: boolean;
}
/**
 * What the studio edits (docs/flows.md#drafts): the draft, or the published text while there is
 * none.
 */
export interface DraftRecord {
  flow_id: string;
  yaml_content: string;
  is_draft: boolean;
  based_on_version: number;
  published_version: number;
  updated_at: number;
  /** Sent back as If-Match, so a save over someone else's newer draft is refused (412). */
  etag: string;
  diagnostics?: Diagnostic[];
}
export interface FlowVersionSummary {
  number: number;
  /** The document's own `version` string. */
  document_version: string | null;
  note: string;
  created_at: number;
  created_by: { kind: 'studio' } | { kind: 'api_key'; api_key_id: string } | null;
  /** The version sessions run now. */
  published: boolean;
}
export interface FlowVersionRecord extends FlowVersionSummary { yaml_content: string }
export interface PublishedVersion { version: FlowVersionRecord; flow: FlowRecord }
export interface ApiKeyView { id: string; label: string | null; prefix: string; created_at: number; last_used_at: number | null }
export interface CreatedApiKey extends ApiKeyView { key: string }
export interface SessionView {
  id: string;
  token_prefix: string;
  flow_id: string | null;
  /** The flow version it ran; null with flow_draft for an unpublished draft (a studio test). Servers before versions do not send them. */
  flow_version?: number | null;
  flow_draft?: boolean;
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
/** GET /v1/sessions/{id}: what a call produced (docs/api.md#what-a-call-leaves-behind). */
export interface SessionDetail extends SessionView {
  flow_version: number | null;
  metadata: Record<string, unknown>;
  variables: Record<string, unknown>;
  path: Array<{ state: string; at: number }>;
  transcript: Array<{ role: 'user' | 'agent'; text: string; at: number; interrupted: boolean }>;
  tool_calls: Array<{ name: string; arguments: unknown; status: 'accepted' | 'rejected'; reason: string | null; from_state: string; to_state: string; source: 'model' | 'simulator'; at: number }>;
  /** The http tools' answers (servers before these existed do not send them). */
  tool_results?: Array<{ name: string; arguments: unknown; ok: boolean; http_status: number | null; result: unknown; error: string | null; from_state: string; to_state: string; source: 'model' | 'simulator'; at: number }>;
  metrics: Array<{ turn: number; endpointing_ms: number | null; stt_ms: number | null; llm_ttft_ms: number | null; tts_ttfb_ms: number | null; voice_to_voice_ms: number | null; server_ms: number | null; at: number }>;
  errors: Array<{ code: string; message: string; fatal: boolean; at: number }>;
  recording: { url: string; format: string } | null;
  timeline: { events: number; bytes: number; dropped_events: number; cap: { events: number; bytes: number } };
}
export interface CreditPart {
  provider: string;
  /** Whose key serves the part: the server's (charged), the account's own or an embedded provider (free), or nothing. */
  key_source: 'server' | 'account' | 'embedded' | 'none';
  rate_per_minute_usd_cents: number;
}
export interface CreditsView {
  balance_usd_cents: number;
  rate_per_minute_usd_cents: number;
  effective_rate_per_minute_usd_cents: number;
  /** Each part's price and key (servers before this existed do not send it). */
  parts?: Record<ProviderKind, CreditPart>;
}
export type ProviderKind = 'stt' | 'llm' | 'tts';
export type ProvidersView = Record<`${ProviderKind}_provider` | `${ProviderKind}_api_key`, string | null> &
  // The account's own endpoint and model (servers before these existed do not send them).
  Partial<Record<`${ProviderKind}_base_url` | `${ProviderKind}_model`, string | null>> & {
  /** Saved, but something is worth knowing (the provider could not be reached to check the key). */
  warnings?: string[];
};
export type ProvidersPatch = Partial<Record<`${ProviderKind}_provider` | `${ProviderKind}_api_key` | `${ProviderKind}_base_url` | `${ProviderKind}_model`, string | null>>;
export interface Capabilities { [key: string]: unknown }
/**
 * Webhook endpoints (docs/api.md#what-a-call-leaves-behind): the session events an account's
 * backend is sent, signed.
 */
export type WebhookEventType = 'session.started' | 'session.state_changed' | 'session.tool_called' | 'session.ended';
export interface WebhookView { id: string; url: string; events: WebhookEventType[]; created_at: number }
/** The signing secret (`whsec_…`) comes only in the answer to the create. */
export interface CreatedWebhook extends WebhookView { secret: string }
export interface WebhookAttemptView { attempt: number; at: number; status_code: number | null; error: string | null; duration_ms: number }
export interface WebhookDeliveryView {
  /** The webhook-id header: the same on every attempt. */
  id: string;
  event_type: WebhookEventType;
  session_id: string | null;
  /** pending (waiting for its next attempt), delivered, or failed (given up). */
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  created_at: number;
  next_attempt_at: number | null;
  last_attempt_at: number | null;
  delivered_at: number | null;
  attempt_log: WebhookAttemptView[];
}
/** Flow tests (docs/testing.md#flow-tests): YAML tests stored with their flow, and their runs. */
export interface FlowTestView {
  id: string;
  flow_id: string;
  name: string;
  yaml_content: string;
  created_at: number;
  updated_at: number;
  diagnostics?: TestDiagnostic[];
}
export interface TestCheckView { check: string; passed: boolean; expected: unknown; actual: unknown; message: string }
export interface TestStepView {
  index: number;
  /** `user: …`, `simulate: tool`, or `check`. */
  action: string;
  passed: boolean;
  checks: TestCheckView[];
  transcript: Array<{ role: 'user' | 'agent'; text: string; interrupted?: boolean }>;
  /** An http tool's call carries its answer and the state the answer chose. */
  tool_calls: Array<{ name: string; arguments: unknown; status: 'accepted' | 'rejected'; reason: string | null; from_state: string; to_state: string; answer?: { ok: boolean; http_status: number | null; error: string | null } }>;
  path: string[];
  /** The state when the step was over. */
  state: string;
}
export interface TestRunOnceView { passed: boolean; steps: TestStepView[]; path: string[]; duration_ms: number; error: string | null }
export interface TestResultView { test_id: string | null; name: string; passed: boolean; pass_rate: number; runs: TestRunOnceView[]; coverage: FlowCoverage }
export interface FlowTestRunView {
  id: string;
  flow_id: string;
  mode: 'scripted' | 'model' | 'audio';
  draft: boolean;
  flow_version: number | null;
  test_ids: string[];
  status: 'running' | 'passed' | 'failed' | 'error';
  error: string | null;
  created_at: number;
  finished_at: number | null;
  result?: { passed: boolean; tests: TestResultView[]; coverage: FlowCoverage; duration_ms: number } | null;
}
