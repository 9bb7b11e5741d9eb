// What the session endpoints answer: a started session's token, the list, and what a call
// produced (the `session.ended` webhook carries the same detail).
import { z } from 'zod';
import { UnixSeconds } from './accounts.ts';
import { AdherenceView } from './flow-tests.ts';
import { CallStatusView } from './phone.ts';

export const CreatedSession = z.object({
  /** Good for one connection, shortly; hand only it (in ws_url) to the browser. */
  session_token: z.string(),
  ws_url: z.string(),
  transport: z.literal('websocket'),
  credits_remaining: z.number(),
  /** The flow's running experiment that gave this session its arm (docs/api.md#experiments), and the arm (the version it runs); null without one. */
  experiment_id: z.string().nullable(),
  experiment_arm: z.number().nullable(),
});

const ToolCallSource = z.enum(['model', 'simulator']);
export const SessionView = z.object({
  id: z.string(),
  /** Null for a session the studio started (it has no token to show). */
  token_prefix: z.string().nullable(),
  flow_id: z.string().nullable(),
  mode: z.enum(['assistant', 'flow']),
  transport: z.string().nullable(),
  /** created, connected, ended, or expired (a token that can no longer connect). */
  status: z.string(),
  created_at: UnixSeconds,
  /** When an unclaimed token stops working; null once claimed. */
  expires_at: UnixSeconds.nullable(),
  started_at: UnixSeconds.nullable(),
  ended_at: UnixSeconds.nullable(),
  duration_secs: z.number().nullable(),
  end_reason: z.string().nullable(),
  credits_charged_usd_cents: z.number(),
  /** The flow version it ran; null with flow_draft for an unpublished draft (a studio test). */
  flow_version: z.number().nullable(),
  flow_draft: z.boolean(),
  /** The experiment that gave the session its arm (docs/api.md#experiments), and the arm: the version it runs. Null for the others. */
  experiment_id: z.string().nullable(),
  experiment_arm: z.number().nullable(),
  /** A phone call's numbers, masked in lists (+1555•••4567); null for other sessions. */
  from: z.string().nullable(),
  to: z.string().nullable(),
  /** Which way a phone call went; null for other sessions. */
  direction: z.enum(['inbound', 'outbound']).nullable(),
  /** The call's success once analysed (docs/api.md#outcome-and-success); null before, or when its flow declares no criteria. */
  success: z.union([z.boolean(), z.literal('unknown')]).nullable().optional(),
  /** What the call produced once analysed: each outcome field's value (null when unknown); null before, or when its flow declares none. */
  outcome: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).nullable()).nullable().optional(),
});

const inFlow = { from_state: z.string(), to_state: z.string(), source: ToolCallSource, at: UnixSeconds };
/** The per-turn latencies of a voice session, as its `metrics` events carry them. */
export const TurnMetricsView = z.object({
  turn: z.number(),
  endpointing_ms: z.number().nullable(),
  stt_ms: z.number().nullable(),
  llm_ttft_ms: z.number().nullable(),
  tts_ttfb_ms: z.number().nullable(),
  voice_to_voice_ms: z.number().nullable(),
  server_ms: z.number().nullable(),
  at: UnixSeconds,
});
const OutcomeValueView = z.union([z.string(), z.number(), z.boolean()]).nullable();
/** What a call produced, per the flow's settings.outcome (docs/api.md#outcome-and-success). */
export const OutcomeView = z.object({
  values: z.record(z.string(), OutcomeValueView),
  fields: z.record(
    z.string(),
    z.object({ value: OutcomeValueView, source: z.enum(['variable', 'model']).nullable(), status: z.enum(['known', 'unknown']), error: z.string().optional() }),
  ),
  errors: z.array(z.string()),
});
/** Whether the call succeeded, per the flow's settings.success, each criterion with its reason. */
export const SuccessView = z.object({
  value: z.union([z.boolean(), z.literal('unknown')]),
  criteria: z.array(z.object({ criterion: z.string(), kind: z.string(), met: z.union([z.boolean(), z.literal('unknown')]), reason: z.string() })),
});

/** GET /v1/sessions/{id}: what a call produced, from its stored timeline. */
export const SessionDetail = SessionView.extend({
  /** A phone call's side, whole (null for other sessions): the numbers unmasked, the carrier's id and status, a transfer's target. */
  carrier_call_id: z.string().nullable(),
  call_status: CallStatusView.nullable(),
  transferred_to: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  variables: z.record(z.string(), z.unknown()),
  path: z.array(z.object({ state: z.string(), at: UnixSeconds })),
  transcript: z.array(z.object({ role: z.enum(['user', 'agent']), text: z.string(), at: UnixSeconds, interrupted: z.boolean() })),
  tool_calls: z.array(z.object({ name: z.string(), arguments: z.unknown(), status: z.enum(['accepted', 'rejected']), reason: z.string().nullable(), code: z.string().optional(), ...inFlow })),
  /** How the model kept to the flow: its tool calls, the moves they made, and what the flow refused. */
  adherence: AdherenceView,
  /** The http tools' answers: what came back, or why nothing did. */
  tool_results: z.array(
    z.object({
      name: z.string(),
      url: z.string(),
      method: z.string(),
      arguments: z.unknown(),
      ok: z.boolean(),
      http_status: z.number().nullable(),
      duration_ms: z.number(),
      result: z.unknown(),
      error: z.string().nullable(),
      ...inFlow,
    }),
  ),
  metrics: z.array(TurnMetricsView),
  errors: z.array(z.object({ code: z.string(), message: z.string(), fatal: z.boolean(), at: UnixSeconds })),
  recording: z.object({ url: z.string(), format: z.string() }).nullable(),
  timeline: z.object({ events: z.number(), bytes: z.number(), dropped_events: z.number(), cap: z.object({ events: z.number(), bytes: z.number() }) }),
  /** pending until the call's outcome and success are analysed, then done; null when its flow declares neither. */
  analysis_status: z.enum(['pending', 'done']).nullable(),
  outcome: OutcomeView.nullable(),
  success: SuccessView.nullable(),
});

/** The raw timeline a page at a time: `next_after` is the `after` of the next page, null at the end. */
export const SessionEventsPage = z.object({
  events: z.array(z.object({ seq: z.number(), at: UnixSeconds, type: z.string(), event: z.unknown() })),
  next_after: z.number().nullable(),
});
