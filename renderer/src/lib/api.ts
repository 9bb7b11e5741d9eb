// The studio's client for the hosted API: one typed function per endpoint, errors as values the
// screens must handle (STYLE: errors as values where a caller must handle them). The JWT lives in
// this page's memory only, where no other tab and no storage can read it; a new tab or a reload
// gets a fresh one from the server's HttpOnly refresh cookie (POST /auth/refresh), and the
// desktop app gets one from the preload. The shapes live in api-types.ts (re-exported here).
import type {
  ApiResult,
  FlowSummary,
  FlowLayout,
  FlowRecord,
  DraftRecord,
  FlowViewRecord,
  FlowVersionSummary,
  FlowVersionRecord,
  PublishedVersion,
  ExperimentView,
  ExperimentDetail,
  ApiKeyView,
  CreatedApiKey,
  SecretView,
  ToolTestRequestResult,
  SessionView,
  SessionDetail,
  CreditsView,
  ProvidersView,
  ProvidersPatch,
  Capabilities,
  WebhookView,
  CreatedWebhook,
  WebhookDeliveryView,
  WebhookEventType,
  FlowTestView,
  FlowTestRunView,
  PhoneNumberView,
  PhoneCarrier,
  DoNotCallEntry,
  SessionEventsPage,
  FlowTrafficView,
  TransitionSessionsPage,
} from './api-types.ts';

export type * from './api-types.ts';

let accessToken: string | null = null;
let signedInEmail: string | null = null;
/**
 * Set while this browser has signed in (not a secret: a flag), so a visitor who never did is not
 * sent to POST /auth/refresh only to get the expected 401, which browsers log as a console error.
 */
const SIGNED_IN_HERE = 'voxflow.signed-in';
const unauthorizedListeners = new Set<() => void>();

export function currentToken(): string | null {
  return accessToken;
}
export function currentEmail(): string | null {
  return signedInEmail;
}
export function rememberSignIn(token: string, email: string): void {
  accessToken = token;
  signedInEmail = email;
  localStorage.setItem(SIGNED_IN_HERE, '1');
}
export function forgetSignIn(): void {
  accessToken = null;
  signedInEmail = null;
  localStorage.removeItem(SIGNED_IN_HERE);
  // Tokens kept by studios before the refresh cookie: gone for good.
  sessionStorage.removeItem('voxflow.access_token');
  sessionStorage.removeItem('voxflow.email');
}

/**
 * This browser's sign-in, from the refresh cookie (a new tab, a reload, an expired access
 * token); null when there is none or it has expired. The answer is expected, not an error.
 */
export async function restoreFromCookie(): Promise<{ token: string; email: string } | null> {
  if (localStorage.getItem(SIGNED_IN_HERE) === null) return null;
  try {
    const response = await fetch('/auth/refresh', { method: 'POST', credentials: 'same-origin' });
    if (!response.ok) {
      localStorage.removeItem(SIGNED_IN_HERE);
      return null;
    }
    const body = (await response.json()) as { access_token: string; email: string };
    return { token: body.access_token, email: body.email };
  } catch {
    return null;
  }
}

/** Clears the refresh cookie (signing out of this browser, every tab). */
export async function clearCookie(): Promise<void> {
  await fetch('/auth/logout', { method: 'POST', credentials: 'same-origin' }).catch(() => undefined);
}
/** Called when a signed-in request comes back 401 (an expired token): the app shows sign-in. */
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

async function request<T>(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<ApiResult<T>> {
  const headers: Record<string, string> = { ...extraHeaders };
  if (accessToken) headers.authorization = `Bearer ${accessToken}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    return { ok: false, status: 0, code: 'network', message: 'The server cannot be reached. Is it running?', details: null };
  }
  if (response.status === 204) return { ok: true, value: undefined as T };
  let payload: unknown = null;
  try {
    payload = await response.json();
  } catch {
    // Not JSON (a proxy's error page, say): reported below with the status alone.
  }
  if (response.ok) return { ok: true, value: payload as T };
  const error = (payload as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
  if (response.status === 401 && accessToken) for (const listener of unauthorizedListeners) listener();
  return {
    ok: false,
    status: response.status,
    code: error?.code ?? `http_${response.status}`,
    message: error?.message ?? `The server answered ${response.status} ${response.statusText}.`,
    details: error?.details ?? null,
  };
}

const id = (value: string) => encodeURIComponent(value);

/**
 * Whether the server runs on this machine (the page came from a loopback address; the desktop
 * app's server is always such). The editor then waits for the server's view of a flow before its
 * own worker parses the text, rather than both parsing it at once on the same cores
 * (flow-text.svelte.ts, `viewFirst`).
 */
export const serverOnThisMachine = typeof location !== 'undefined' && ['127.0.0.1', 'localhost', '[::1]'].includes(location.hostname);

export const api = {
  signUp: (email: string, password: string) => request<{ access_token: string }>('POST', '/auth/signup', { email, password }),
  logIn: (email: string, password: string) => request<{ access_token: string }>('POST', '/auth/login', { email, password }),

  listFlows: () => request<FlowSummary[]>('GET', '/v1/flows'),
  getFlow: (flowId: string) => request<FlowRecord>('GET', `/v1/flows/${id(flowId)}`),
  createFlow: (name: string, yamlContent: string) => request<FlowRecord>('POST', '/v1/flows', { name, yaml_content: yamlContent }),
  updateFlow: (flowId: string, changes: { name?: string; yaml_content?: string; layout?: FlowLayout | null }) => request<FlowRecord>('PUT', `/v1/flows/${id(flowId)}`, changes),
  deleteFlow: (flowId: string) => request<void>('DELETE', `/v1/flows/${id(flowId)}`),
  // Drafts and versions (docs/flows.md#drafts). `etag` is the draft's as last read or saved: a save
  // or publish over a newer one made elsewhere comes back 412 draft_conflict.
  getDraft: (flowId: string) => request<DraftRecord>('GET', `/v1/flows/${id(flowId)}/draft`),
  /**
   * What the canvas draws for the draft, made on the server: drawn before the flow worker has
   * parsed the text (docs/api.md, `GET /v1/flows/{id}/view`).
   */
  getFlowView: (flowId: string) => request<FlowViewRecord>('GET', `/v1/flows/${id(flowId)}/view`),
  saveDraft: (flowId: string, yamlContent: string, etag: string | null) =>
    request<DraftRecord>('PUT', `/v1/flows/${id(flowId)}/draft`, { yaml_content: yamlContent }, etag ? { 'if-match': `"${etag}"` } : {}),
  discardDraft: (flowId: string, etag: string | null) => request<void>('DELETE', `/v1/flows/${id(flowId)}/draft`, undefined, etag ? { 'if-match': `"${etag}"` } : {}),
  publishDraft: (flowId: string, note: string, etag: string | null) =>
    request<PublishedVersion>('POST', `/v1/flows/${id(flowId)}/publish`, { note }, etag ? { 'if-match': `"${etag}"` } : {}),
  listVersions: (flowId: string) => request<FlowVersionSummary[]>('GET', `/v1/flows/${id(flowId)}/versions`),
  getVersion: (flowId: string, number: number) => request<FlowVersionRecord>('GET', `/v1/flows/${id(flowId)}/versions/${number}`),
  publishVersionAgain: (flowId: string, number: number, note: string) => request<PublishedVersion>('POST', `/v1/flows/${id(flowId)}/versions/${number}/publish`, { note }),
  // A/B experiments between published versions (docs/api.md#experiments).
  listExperiments: (flowId: string) => request<ExperimentView[]>('GET', `/v1/flows/${id(flowId)}/experiments`),
  getExperiment: (flowId: string, experimentId: string) => request<ExperimentDetail>('GET', `/v1/flows/${id(flowId)}/experiments/${id(experimentId)}`),
  createExperiment: (flowId: string, body: { name: string; arms: Array<{ version: number; weight: number }> }) => request<ExperimentView>('POST', `/v1/flows/${id(flowId)}/experiments`, body),
  stopExperiment: (flowId: string, experimentId: string) => request<ExperimentView>('POST', `/v1/flows/${id(flowId)}/experiments/${id(experimentId)}/stop`),
  concludeExperiment: (flowId: string, experimentId: string, winner: number) => request<ExperimentView>('POST', `/v1/flows/${id(flowId)}/experiments/${id(experimentId)}/conclude`, { winner }),

  // Flow tests (docs/testing.md#flow-tests); the studio runs them against the draft.
  listTests: (flowId: string) => request<FlowTestView[]>('GET', `/v1/flows/${id(flowId)}/tests`),
  createTest: (flowId: string, yamlContent: string) => request<FlowTestView>('POST', `/v1/flows/${id(flowId)}/tests`, { yaml_content: yamlContent }),
  updateTest: (flowId: string, testId: string, yamlContent: string) => request<FlowTestView>('PUT', `/v1/flows/${id(flowId)}/tests/${id(testId)}`, { yaml_content: yamlContent }),
  deleteTest: (flowId: string, testId: string) => request<void>('DELETE', `/v1/flows/${id(flowId)}/tests/${id(testId)}`),
  importTests: (flowId: string, yamlContent: string) => request<{ tests: FlowTestView[] }>('POST', `/v1/flows/${id(flowId)}/tests/import`, { yaml_content: yamlContent }),
  /** Audio runs play 4× faster than real time (the most the server allows), as `voxflow test --speed 4`. */
  runTests: (flowId: string, options: { testIds?: string[]; mode?: 'scripted' | 'model' | 'audio' } = {}) =>
    request<FlowTestRunView>('POST', `/v1/flows/${id(flowId)}/tests/run`, {
      draft: true,
      mode: options.mode ?? 'scripted',
      ...(options.mode === 'audio' ? { speed: 4 } : {}),
      ...(options.testIds ? { test_ids: options.testIds } : {}),
    }),
  /** Sends an http tool's request once, as a call would (the saved draft's tool), and answers what came back. */
  tryHttpTool: (flowId: string, tool: string, body: { state?: string; arguments: Record<string, unknown> }) =>
    request<ToolTestRequestResult>('POST', `/v1/flows/${id(flowId)}/tools/${id(tool)}/test-request`, { ...body, draft: true }),
  /** Every test of the flow as one suite file (what `voxflow test` runs). */
  async exportTests(flowId: string): Promise<ApiResult<string>> {
    try {
      const response = await fetch(`/v1/flows/${id(flowId)}/tests/export`, { headers: accessToken ? { authorization: `Bearer ${accessToken}` } : {} });
      if (!response.ok) return { ok: false, status: response.status, code: `http_${response.status}`, message: 'The tests could not be exported.', details: null };
      return { ok: true, value: await response.text() };
    } catch {
      return { ok: false, status: 0, code: 'network', message: 'The server cannot be reached. Is it running?', details: null };
    }
  },
  /** Replays the published version's latest recorded calls (1-20) against the saved draft: a model run, polled as any run. */
  replayRecordedCalls: (flowId: string, sessions: number) => request<FlowTestRunView>('POST', `/v1/flows/${id(flowId)}/replays`, { sessions }),
  getTestRun: (flowId: string, runId: string) => request<FlowTestRunView>('GET', `/v1/flows/${id(flowId)}/tests/runs/${id(runId)}`),

  listApiKeys: () => request<ApiKeyView[]>('GET', '/auth/api-keys'),
  createApiKey: (label: string) => request<CreatedApiKey>('POST', `/auth/api-keys?label=${encodeURIComponent(label)}`),
  revokeApiKey: (keyId: string) => request<void>('DELETE', `/auth/api-keys/${id(keyId)}`),

  listWebhooks: () => request<WebhookView[]>('GET', '/v1/webhooks'),
  createWebhook: (url: string, events: WebhookEventType[]) => request<CreatedWebhook>('POST', '/v1/webhooks', { url, events }),
  deleteWebhook: (webhookId: string) => request<void>('DELETE', `/v1/webhooks/${id(webhookId)}`),
  listWebhookDeliveries: (webhookId: string) => request<WebhookDeliveryView[]>('GET', `/v1/webhooks/${id(webhookId)}/deliveries`),
  retryWebhookDelivery: (webhookId: string, deliveryId: string) =>
    request<WebhookDeliveryView>('POST', `/v1/webhooks/${id(webhookId)}/deliveries/${id(deliveryId)}/retry`),

  // Phone numbers and the do-not-call list (docs/phone-calls.md).
  listPhoneNumbers: () => request<PhoneNumberView[]>('GET', '/v1/phone-numbers'),
  createPhoneNumber: (body: { carrier: PhoneCarrier; number: string; flow_id: string; label: string }) => request<PhoneNumberView>('POST', '/v1/phone-numbers', body),
  deletePhoneNumber: (numberId: string) => request<void>('DELETE', `/v1/phone-numbers/${id(numberId)}`),
  listDoNotCall: () => request<DoNotCallEntry[]>('GET', '/v1/do-not-call'),
  addDoNotCall: (number: string) => request<DoNotCallEntry>('POST', '/v1/do-not-call', { number }),
  removeDoNotCall: (number: string) => request<void>('DELETE', `/v1/do-not-call/${id(number)}`),

  /** `query`: GET /v1/sessions' filters (docs/api.md#listing-and-searching-sessions), as a query string. */
  listSessions: (query = '') => request<SessionView[]>('GET', query ? `/v1/sessions?${query}` : '/v1/sessions'),
  /** A page of a session's raw timeline, after `after` (a seq). */
  sessionEvents: (sessionId: string, after = 0) => request<SessionEventsPage>('GET', `/v1/sessions/${id(sessionId)}/events?after=${after}`),
  /** `query`: the traffic filters (docs/api.md#analytics), as a query string. */
  flowTraffic: (flowId: string, query = '') => request<FlowTrafficView>('GET', `/v1/analytics/flows/${id(flowId)}${query ? `?${query}` : ''}`),
  transitionSessions: (flowId: string, query: string) => request<TransitionSessionsPage>('GET', `/v1/analytics/flows/${id(flowId)}/sessions?${query}`),
  getSession: (sessionId: string) => request<SessionDetail>('GET', `/v1/sessions/${id(sessionId)}`),
  /** The recording as a blob (an <audio> element cannot send the Authorization header itself). */
  async getRecording(sessionId: string): Promise<ApiResult<Blob>> {
    try {
      const response = await fetch(`/v1/sessions/${id(sessionId)}/recording`, { headers: accessToken ? { authorization: `Bearer ${accessToken}` } : {} });
      if (!response.ok) return { ok: false, status: response.status, code: `http_${response.status}`, message: 'The recording could not be loaded.', details: null };
      return { ok: true, value: await response.blob() };
    } catch {
      return { ok: false, status: 0, code: 'network', message: 'The server cannot be reached. Is it running?', details: null };
    }
  },
  /** A short line in `voice` (null: the default), spoken by the voice this account's sessions use, as a WAV. */
  async previewVoice(voice: string | null): Promise<ApiResult<Blob>> {
    try {
      const headers: Record<string, string> = { 'content-type': 'application/json', ...(accessToken ? { authorization: `Bearer ${accessToken}` } : {}) };
      const response = await fetch('/v1/voices/preview', { method: 'POST', headers, body: JSON.stringify({ voice }) });
      if (!response.ok) {
        const body = (await response.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
        return { ok: false, status: response.status, code: body?.error?.code ?? `http_${response.status}`, message: body?.error?.message ?? 'The preview could not be played.', details: null };
      }
      return { ok: true, value: await response.blob() };
    } catch {
      return { ok: false, status: 0, code: 'network', message: 'The server cannot be reached. Is it running?', details: null };
    }
  },
  credits: () => request<CreditsView>('GET', '/v1/credits/balance'),
  providers: () => request<ProvidersView>('GET', '/v1/providers'),
  updateProviders: (patch: ProvidersPatch) => request<ProvidersView>('PATCH', '/v1/providers', patch),

  /** The account's secret names (never their values): what an http tool's header may name as {secret.NAME}. */
  listSecrets: () => request<SecretView[]>('GET', '/v1/secrets'),
  /** Sets or replaces a secret; the answer has its name and dates, never the value. */
  putSecret: (name: string, value: string) => request<SecretView>('PUT', `/v1/secrets/${id(name)}`, { value }),
  deleteSecret: (name: string) => request<void>('DELETE', `/v1/secrets/${id(name)}`),

  capabilities: () => request<Capabilities>('GET', '/capabilities'),
  health: () => request<Record<string, unknown>>('GET', '/health'),
};
