// One registry of coded errors. Every error a client can see has a stable snake_case code, a
// status and a default message; the body is always {"error":{"code","message","details"}}.

export const ERRORS = {
  malformed_json: { status: 400, message: 'The request body is not valid JSON.' },
  bad_request: { status: 400, message: 'The request is malformed.' },
  sdp_too_complex: { status: 400, message: 'The SDP offer or its ICE candidates are larger than a voice call needs.' },
  missing_credentials: { status: 401, message: 'This endpoint needs a credential: Authorization: Bearer <token> or X-Service-Key: <key>.' },
  invalid_credentials: { status: 401, message: 'The credential is not valid.' },
  invalid_login: { status: 401, message: 'The email or password is wrong.' },
  token_expired: { status: 401, message: 'The access token has expired; log in again.' },
  session_token_invalid: { status: 401, message: 'The session token is unknown, expired or already used.' },
  wrong_credential_kind: { status: 403, message: 'This endpoint does not accept this kind of credential.' },
  carrier_signature_invalid: { status: 403, message: "The carrier's request signature is missing or does not check out." },
  do_not_call: { status: 403, message: "That number is on this account's do-not-call list." },
  forbidden: { status: 403, message: 'This credential may not do that.' },
  origin_not_allowed: { status: 403, message: 'Requests from this web page are not allowed; add its origin to --allowed-origins.' },
  insufficient_credits: { status: 402, message: 'Not enough credit for a minute of voice.' },
  not_found: { status: 404, message: 'Nothing is here.' },
  flow_not_found: { status: 404, message: 'No flow with that id.' },
  flow_version_not_found: { status: 404, message: 'This flow has no version with that number.' },
  api_key_not_found: { status: 404, message: 'No API key with that id.' },
  session_not_found: { status: 404, message: 'No session with that id.' },
  recording_not_found: { status: 404, message: 'This session has no recording.' },
  webhook_not_found: { status: 404, message: 'No webhook endpoint with that id.' },
  secret_not_found: { status: 404, message: 'This account has no secret of that name.' },
  webhook_delivery_not_found: { status: 404, message: 'No delivery with that id for this webhook endpoint.' },
  flow_test_not_found: { status: 404, message: 'This flow has no test with that id.' },
  experiment_not_found: { status: 404, message: 'This flow has no experiment with that id.' },
  test_run_not_found: { status: 404, message: 'This flow has no test run with that id.' },
  phone_number_not_found: { status: 404, message: 'No phone number with that id.' },
  do_not_call_not_found: { status: 404, message: "That number is not on this account's do-not-call list." },
  email_taken: { status: 409, message: 'An account with that email exists already.' },
  no_draft: { status: 409, message: 'This flow has no unpublished changes: save a draft first.' },
  phone_number_taken: { status: 409, message: 'This phone number is already bound on this server; release it there first, or ask your carrier.' },
  flow_in_use: { status: 409, message: 'Phone numbers still answer with this flow: delete them or bind them to another flow first.' },
  recording_starting: { status: 409, message: 'The recording started a moment ago and has nothing in it yet; ask again in a second.' },
  phone_number_not_outbound: { status: 409, message: 'Outbound calls are placed from a number of the account bound to a carrier.' },
  flow_not_published: { status: 409, message: 'This flow has no published version: publish it first (drafts never take real calls).' },
  experiment_running: { status: 409, message: 'This flow already has a running experiment: stop or conclude it first.' },
  version_not_published: { status: 409, message: 'An experiment runs published versions of its flow only (drafts never take real calls).' },
  experiment_concluded: { status: 409, message: 'This experiment was concluded already.' },
  draft_conflict: { status: 412, message: 'The draft was changed elsewhere since it was opened: reload it, or save again to keep yours.' },
  host_not_allowed: { status: 421, message: 'This server does not answer to that host name; add it to --allowed-hosts.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  flow_quota_exceeded: { status: 413, message: "This account's flows take all the storage it may use on this server." },
  unsupported_media_type: { status: 415, message: 'Send the body as application/json.' },
  invalid_request: { status: 422, message: 'The request is not valid.' },
  invalid_flow: { status: 422, message: 'The flow document does not validate.' },
  invalid_flow_test: { status: 422, message: 'The flow test does not validate.' },
  invalid_pipecat_flow: { status: 422, message: 'The file is not a Pipecat Flows FlowConfig.' },
  test_mode_unavailable: { status: 422, message: 'This server cannot run tests in that mode: a provider it needs is not configured.' },
  provider_key_rejected: { status: 422, message: 'The provider refused this key.' },
  webhook_target_not_allowed: { status: 422, message: 'This server sends webhooks only to public internet addresses, never to its own network or host; use a public address (or start it with --allow-private-webhooks for loopback and private networks).' },
  test_run_too_large: { status: 422, message: 'This run would play more steps than a test run may; run fewer tests or fewer repeats.' },
  webhook_host_unresolvable: { status: 422, message: "The webhook URL's host name cannot be resolved: check it for typos, or that its DNS record exists." },
  flow_too_complex: { status: 422, message: 'The flow document takes too long to process; make it smaller or simpler.' },
  rate_limited: { status: 429, message: 'Too many requests; slow down.' },
  too_many_calls: { status: 429, message: 'This account places as many phone calls as it may right now; try again shortly.' },
  test_run_in_progress: { status: 429, message: 'This account has as many flow test runs in progress as it may; wait for a result first.' },
  too_many_sessions: { status: 429, message: 'This account has as many live voice sessions as it may; end one first.' },
  carrier_unavailable: { status: 502, message: 'The phone carrier did not take the request; try again shortly.' },
  voice_unavailable: { status: 502, message: 'The voice provider did not speak the preview; try again shortly.' },
  internal: { status: 500, message: 'Something went wrong on our side.' },
  at_capacity: { status: 503, message: 'The server is at capacity; try again shortly.' },
  store_unavailable: { status: 503, message: 'The database cannot take writes right now.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

export class AppError extends Error {
  override name = 'AppError';
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly details?: unknown[],
    /** Extra response headers, e.g. Retry-After on 429. */
    readonly headers?: Record<string, string>,
  ) {
    super(message ?? ERRORS[code].message);
    this.status = ERRORS[code].status;
  }
}

export interface ErrorBody {
  error: { code: string; message: string; details?: unknown[] };
}

export function errorBody(code: string, message: string, details?: unknown[]): ErrorBody {
  return { error: details && details.length > 0 ? { code, message, details } : { code, message } };
}
