// The hosted API's shapes as the studio sees them, derived from the response schemas the server
// answers with (server/protocol/api/), so the two cannot drift: a field the server adds, renames
// or drops is a type error here. Type-only imports: no zod reaches the studio's bundle. Pure
// types, apart from api.ts (which touches sessionStorage), so pure helpers and their Node-side
// unit tests can import them.
import type { z } from 'zod';
import type * as Accounts from '../../../server/protocol/api/accounts.ts';
import type * as Analytics from '../../../server/protocol/api/analytics.ts';
import type * as EngineRouter from '../../../server/protocol/api/engine-router.ts';
import type * as FlowTests from '../../../server/protocol/api/flow-tests.ts';
import type * as Experiments from '../../../server/protocol/api/experiments.ts';
import type * as Flows from '../../../server/protocol/api/flows.ts';
import type * as Phone from '../../../server/protocol/api/phone.ts';
import type * as Sessions from '../../../server/protocol/api/sessions.ts';
import type * as Webhooks from '../../../server/protocol/api/webhooks.ts';
import type { FlowView } from '../../../server/flow/graph/view.ts';

export interface ApiFailure {
  ok: false;
  status: number;
  code: string;
  message: string;
  details: unknown;
}
export type ApiResult<T> = { ok: true; value: T } | ApiFailure;

/** The studio also talks to servers older than these fields (the desktop app to a hosted one): it must do without them. */
type FromOlderServers<T, Added extends keyof T> = Omit<T, Added> & Partial<Pick<T, Added>>;

/** Times are Unix seconds, as the API sends them. */
export type FlowSummary = z.infer<typeof Flows.FlowSummary>;
/** Where the studio draws each state; kept beside the YAML by the server, never inside it. */
export type FlowLayout = z.infer<typeof Flows.FlowLayout>;
export type FlowRecord = FromOlderServers<z.infer<typeof Flows.FlowRecord>, 'published_version' | 'has_draft'>;
/** What the studio edits: the draft, or the published text while there is none. */
export type DraftRecord = z.infer<typeof Flows.DraftRecord>;
/**
 * What the canvas draws for the flow's draft and saved layout, made by the studio's own code on
 * the server (server/flow/graph/view.ts); null when the text is not readable YAML.
 */
export type FlowViewRecord = Omit<z.infer<typeof Flows.FlowViewRecord>, 'view'> & { view: FlowView | null };
export type FlowVersionSummary = z.infer<typeof Flows.FlowVersionSummary>;
export type FlowVersionRecord = z.infer<typeof Flows.FlowVersionRecord>;
/** What "Send a test request" on an http tool's card got back. */
export type ToolTestRequestResult = z.infer<typeof Flows.ToolTestRequestResult>;
export type PublishedVersion = z.infer<typeof Flows.PublishedVersion>;
/** An A/B experiment between a flow's published versions (docs/api.md#experiments). */
export type ExperimentView = z.infer<typeof Experiments.ExperimentView>;
export type ExperimentDetail = z.infer<typeof Experiments.ExperimentDetail>;
export type ExperimentArmResults = z.infer<typeof Experiments.ExperimentArmResults>;
export type ApiKeyView = z.infer<typeof Accounts.ApiKeyView>;
export type CreatedApiKey = z.infer<typeof Accounts.CreatedApiKey>;
/** A secret's name and dates: its value never comes back. */
export type SecretView = z.infer<typeof Accounts.SecretView>;
/** Servers before phone calls send no `from`/`to` (nor the detail's call fields). */
type PhoneFields = 'from' | 'to' | 'direction';
/** Servers before experiments send no experiment or arm. */
type ExperimentFields = 'experiment_id' | 'experiment_arm';
export type SessionView = FromOlderServers<z.infer<typeof Sessions.SessionView>, 'flow_version' | 'flow_draft' | PhoneFields | ExperimentFields>;
/** GET /v1/sessions/{id}: what a call produced. */
/** Servers before call analysis send no outcome or success. */
type AnalysisFields = 'analysis_status' | 'outcome' | 'success';
export type SessionDetail = FromOlderServers<z.infer<typeof Sessions.SessionDetail>, 'flow_draft' | 'tool_results' | PhoneFields | 'carrier_call_id' | 'call_status' | 'transferred_to' | AnalysisFields | ExperimentFields>;
export type CreditPart = z.infer<typeof Accounts.CreditPart>;
export type CreditsView = FromOlderServers<z.infer<typeof Accounts.CreditsView>, 'parts'>;
export type ProviderKind = z.infer<typeof Accounts.ProviderKind>;
type ProviderFields = z.infer<typeof Accounts.ProvidersView>;
/** The carriers' (and the SIP endpoint's) credentials, which servers before phone calls (or SIP) do not send. */
export type CarrierField = Extract<keyof ProviderFields, `twilio_${string}` | `telnyx_${string}` | `plivo_${string}` | `sip_${string}`>;
/** A part's provider reads null while the account's view is not known (the studio then goes by /capabilities). */
export type ProvidersView = Omit<FromOlderServers<ProviderFields, `${ProviderKind}_base_url` | `${ProviderKind}_model` | CarrierField>, `${ProviderKind}_provider`> &
  Record<`${ProviderKind}_provider`, string | null>;
/** PATCH /v1/providers: any of the view's keys, providers, base URLs and models; null clears one. */
export type ProvidersPatch = Partial<Record<`${ProviderKind}_provider` | `${ProviderKind}_api_key` | `${ProviderKind}_base_url` | `${ProviderKind}_model` | CarrierField, string | null>>;
export type Capabilities = z.infer<typeof EngineRouter.Capabilities>;
/** Webhook endpoints: the session events an account's backend is sent, signed. */
export type WebhookEventType = z.infer<typeof Webhooks.WebhookEventType>;
export type WebhookView = z.infer<typeof Webhooks.WebhookView>;
/** The signing secret (`whsec_…`) comes only in the answer to the create. */
export type CreatedWebhook = z.infer<typeof Webhooks.CreatedWebhook>;
export type WebhookAttemptView = z.infer<typeof Webhooks.WebhookAttemptView>;
export type WebhookDeliveryView = z.infer<typeof Webhooks.WebhookDeliveryView>;
/** Flow tests: YAML tests stored with their flow, and their runs. */
export type FlowTestView = z.infer<typeof FlowTests.FlowTestView>;
export type TestCheckView = z.infer<typeof FlowTests.TestCheckView>;
export type TestStepView = z.infer<typeof FlowTests.TestStepView>;
export type TestRunOnceView = z.infer<typeof FlowTests.TestRunOnceView>;
export type TestResultView = z.infer<typeof FlowTests.TestResultView>;
export type FlowTestRunView = z.infer<typeof FlowTests.FlowTestRunView>;
/** Phone numbers bound to flows, with the URLs to paste into the carrier's console. */
export type PhoneNumberView = z.infer<typeof Phone.PhoneNumberView>;
export type PhoneCarrier = PhoneNumberView['carrier'];
export type CallStatus = z.infer<typeof Phone.CallStatusView>;
/** A number the account's outbound calls must never ring. */
export type DoNotCallEntry = z.infer<typeof Phone.DoNotCallEntry>;
/** One entry of a session's raw timeline (GET /v1/sessions/{id}/events). */
export type SessionEventsPage = z.infer<typeof Sessions.SessionEventsPage>;
/** GET /v1/analytics/flows/{id}: where a flow's calls went, moved and ended (the editor's Traffic overlay). */
export type FlowTrafficView = z.infer<typeof Analytics.FlowTrafficView>;
/** GET /v1/analytics/flows/{id}/sessions: the calls that took one move. */
export type TransitionSessionsPage = z.infer<typeof Analytics.TransitionSessionsPage>;
