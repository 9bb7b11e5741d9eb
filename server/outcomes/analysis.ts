// Each ended call's outcome and success (docs/api.md#outcome-and-success), worked out after the
// session is stored as ended, so it never delays the call's end.
//
// A durable job: the session's analysis row is opened 'pending' in the store before any work
// (repositories/analyses.ts), claimed by this node for CLAIM_SECS and renewed between model
// requests; the result and its `session.analyzed` deliveries are written together. A server
// killed in the middle leaves the row pending: at its next start (recover) it is done again from
// the stored timeline, and on PostgreSQL another node's sweep takes it once the claim runs out.
//
// The outcome's fields come first from the flow's variables of the same name; only the rest are
// asked of the account's model, with a strict JSON schema, each value checked against its field;
// a wrong or unreadable answer is asked again, MAX_REQUESTS in all, then the field is `unknown`
// with the error. The plain success criteria need no model (flow/outcome.ts); `judge` criteria
// ask it with a {met, reason} schema the same bounded way.
// Just over 400 lines: the analysis job's claim, renewal, retries and delivery belong together,
// since a crash anywhere between them must leave the job to be taken up again whole.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { FlowDocument } from '../flow/types.ts';
import {
  JUDGE_JSON_SCHEMA,
  criterionKind,
  criterionText,
  evaluatePlain,
  outcomeJsonSchema,
  outcomeValueProblem,
  overallSuccess,
  valueFromVariable,
  type CriterionResult,
  type OutcomeValue,
} from '../flow/outcome.ts';
import type { OutcomeField, SuccessCriterion } from '../flow/schema.ts';
import { newWebhookMessageId } from '../security/webhook-signature.ts';
import type { AnalysisSuccess, NewWebhookDelivery, Session, Store } from '../store/store.ts';
import { sessionOutcome, type SessionOutcome } from './session-detail.ts';
import { sessionAnalyzedEnvelope } from './webhooks/events.ts';

/** Requests for one set of fields, or one judged criterion, before it is given up as unknown. */
export const MAX_REQUESTS = 3;
/** How long a node's claim on an analysis holds before another node may take it. */
export const CLAIM_SECS = 120;
/** How often the store is looked at for analyses an earlier run or a dead node left. */
const SWEEP_MS = 30_000;
/** How far back, in seconds, the sweep at start looks for ended sessions with no analysis opened. */
const SWEEP_SINCE_SECS = 24 * 60 * 60;
/** Analyses at once on this node (the flow-job pool takes two jobs of one account at a time). */
const MAX_AT_ONCE = 2;
/** Tries of an analysis that fails before its row is opened, and the wait before the next (times the try). */
const RETRIES_BEFORE_OPEN = 5;
const RETRY_BEFORE_OPEN_MS = 10_000;
/** The call's text given to the model at most: its end is kept, where outcomes are settled. */
const MAX_CALL_CHARS = 60_000;

/** What the model is asked with: the account's own, as its calls use it (a subset of the providers' LanguageModel). */
export interface OutcomeModel {
  readonly provider: string;
  structured(request: {
    messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }>;
    schema: { name: string; schema: Record<string, unknown> };
    signal: AbortSignal;
    /** The flow's own model (settings.llm.model), as its calls use it. */
    model?: string;
  }): Promise<{ kind: 'json' | 'refusal'; text: string }>;
}

export interface AnalysisDeps {
  store: Store;
  log: { error(object: Record<string, unknown>, message: string): void; warn(object: Record<string, unknown>, message: string): void };
  /** The flow document the session ran; null when it is gone. */
  flowOf(session: Session): Promise<FlowDocument | null>;
  /** The account's model; null when it has none that can answer in a JSON schema. */
  modelFor(accountId: string): Promise<OutcomeModel | null>;
  /** Told when deliveries were written (the webhook dispatcher's wake). */
  written(): void;
  /** Tests shorten the sweep. */
  sweepMs?: number;
}

export interface FieldResult {
  value: OutcomeValue | null;
  /** Where the value came from; null when none was found. */
  source: 'variable' | 'model' | null;
  status: 'known' | 'unknown';
  error?: string;
}

export interface AnalysisResult {
  outcome: { values: Record<string, OutcomeValue | null>; fields: Record<string, FieldResult>; errors: string[] } | null;
  success: {
    value: boolean | 'unknown';
    criteria: Array<{ criterion: string; kind: string; met: boolean | 'unknown'; reason: string }>;
  } | null;
  analyzed_at: number;
}

export class SessionAnalyzer {
  private readonly running = new Map<string, Promise<void>>();
  private readonly retries = new Set<NodeJS.Timeout>();
  private busy = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: AnalysisDeps) {}

  /** The session is stored as ended (and its session.ended is in the outbox): analyse it. */
  sessionClosed(sessionId: string): Promise<void> {
    return this.run(sessionId);
  }

  /** Analyses an earlier run left unfinished, now, then a sweep every so often (another node's, once its claim runs out). */
  start(): void {
    if (this.stopping.signal.aborted || this.timer) return;
    // At start also the sessions of the last day that ended with no analysis opened (the server
    // died between the two); after that only what is pending, which needs no read of the sessions.
    void this.sweep(true);
    this.timer = setInterval(() => void this.sweep(false), this.deps.sweepMs ?? SWEEP_MS);
    this.timer.unref();
  }

  /** Stops sweeping and waits for the analyses in progress; their model requests are cut (they stay pending). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const retry of this.retries) clearTimeout(retry);
    this.retries.clear();
    this.stopping.abort();
    await Promise.all([...this.running.values()]);
  }

  private async sweep(unopened: boolean): Promise<void> {
    if (this.stopping.signal.aborted) return;
    try {
      const ids = await this.deps.store.analyses.unfinished(Date.now() / 1000 - SWEEP_SINCE_SECS, 100, unopened);
      for (const id of ids) await this.run(id);
    } catch (error) {
      this.deps.log.error({ err: error }, 'could not look for unfinished call analyses');
    }
  }

  private run(sessionId: string, attempt = 1): Promise<void> {
    const already = this.running.get(sessionId);
    if (already) return already;
    if (this.stopping.signal.aborted) return Promise.resolve();
    const work = this.slot()
      .then((release) => (this.stopping.signal.aborted ? release() : this.analyse(sessionId).finally(release)))
      .catch((error: unknown) => {
        if (this.stopping.signal.aborted) return;
        this.deps.log.error({ err: error, session: sessionId }, 'could not analyse the call; it is tried again later');
        // A pending analysis is found again by the sweep; one that failed before it was opened
        // (the flow could not be read just then) is tried again here, a few times.
        if (attempt < RETRIES_BEFORE_OPEN) {
          const again = setTimeout(() => {
            this.retries.delete(again);
            void this.run(sessionId, attempt + 1);
          }, RETRY_BEFORE_OPEN_MS * attempt);
          again.unref();
          this.retries.add(again);
        }
      })
      .finally(() => this.running.delete(sessionId));
    this.running.set(sessionId, work);
    return work;
  }

  /**
   * Waits for one of the MAX_AT_ONCE places: many calls ending together are analysed a few at a
   * time, so their flows' parses stay within the flow-job pool's share for one account and the
   * model's provider is not sent a burst. Resolves with the release.
   */
  private async slot(): Promise<() => void> {
    while (this.busy >= MAX_AT_ONCE) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.busy++;
    return () => {
      this.busy--;
      this.waiting.shift()?.();
    };
  }

  private async analyse(sessionId: string): Promise<void> {
    const { store } = this.deps;
    const session = await store.sessions.findById(sessionId);
    if (!session || session.status !== 'ended' || session.flowId === null) return;
    let analysis = await store.analyses.get(sessionId);
    if (analysis && analysis.state !== 'pending') return;
    const flow = await this.deps.flowOf(session);
    const outcomeFields = flow?.settings?.outcome ?? {};
    const criteria = flow?.settings?.success ?? [];
    const declared = Object.keys(outcomeFields).length > 0 || criteria.length > 0;
    if (!analysis) {
      await store.analyses.open(sessionId, session.accountId, declared ? 'pending' : 'none');
      if (!declared) return;
      analysis = await store.analyses.get(sessionId);
      if (analysis?.state !== 'pending') return;
    }
    const claim = () => store.analyses.claim(sessionId, Date.now() / 1000 + CLAIM_SECS);
    if (!(await claim())) return;

    const call = await sessionOutcome(store, sessionId);
    await yieldToLoop();
    const signal = this.stopping.signal;
    let model: OutcomeModel | null | undefined;
    // The account's model, with the flow's own model name when it sets one, as its calls get them.
    const flowModel = flow?.settings?.llm?.model;
    const withFlowModel = (found: OutcomeModel | null): OutcomeModel | null =>
      found && flowModel ? { provider: found.provider, structured: (request) => found.structured({ ...request, model: flowModel }) } : found;
    const modelOnce = async () => {
      if (model !== undefined) return model;
      try {
        model = withFlowModel(await this.deps.modelFor(session.accountId));
      } catch (error) {
        this.deps.log.warn({ err: error, session: sessionId }, "the account's model could not be made for the call analysis");
        model = null;
      }
      return model;
    };
    const context = callText(call, session);

    const outcome = Object.keys(outcomeFields).length > 0 ? await this.outcomeOf(outcomeFields, call, context, modelOnce, claim, signal) : null;
    const success = criteria.length > 0 ? await this.successOf(criteria, outcome, call, session, context, modelOnce, claim, signal) : null;
    signal.throwIfAborted();

    const result: AnalysisResult = { outcome, success, analyzed_at: Date.now() / 1000 };
    const successValue: AnalysisSuccess | null = success === null ? null : (String(success.value) as AnalysisSuccess);
    const endpoints = await store.webhooks.subscribers(session.accountId, 'session.analyzed');
    const envelope = sessionAnalyzedEnvelope(session, result);
    const payload = JSON.stringify(envelope);
    const deliveries: NewWebhookDelivery[] = endpoints.map((endpoint) => ({
      id: newWebhookMessageId(),
      webhookId: endpoint.id,
      accountId: session.accountId,
      sessionId,
      eventType: 'session.analyzed',
      payload,
      createdAt: result.analyzed_at,
    }));
    if (await store.analyses.complete(sessionId, result as unknown as Record<string, unknown>, successValue, deliveries)) {
      if (deliveries.length > 0) this.deps.written();
    }
  }

  private async outcomeOf(
    fields: Record<string, OutcomeField>,
    call: SessionOutcome,
    context: string,
    model: () => Promise<OutcomeModel | null>,
    claim: () => Promise<boolean>,
    signal: AbortSignal,
  ): Promise<NonNullable<AnalysisResult['outcome']>> {
    const results: Record<string, FieldResult> = {};
    let wanted: string[] = [];
    for (const [name, field] of Object.entries(fields)) {
      const value = valueFromVariable(field, call.variables[name]);
      if (value !== undefined) results[name] = { value, source: 'variable', status: 'known' };
      else wanted.push(name);
    }
    if (wanted.length > 0) {
      const extractor = await model();
      if (!extractor) {
        const error = 'no model to extract it with: the account and the server have no language model that answers in a JSON schema';
        for (const name of wanted) results[name] = { value: null, source: null, status: 'unknown', error };
      } else {
        const problems = new Map<string, string>();
        for (let request = 1; request <= MAX_REQUESTS && wanted.length > 0; request++) {
          if (request > 1 && !(await claim())) throw new Error('the claim on this analysis was lost to another node');
          const asked = Object.fromEntries(wanted.map((name) => [name, fields[name]!]));
          const answer = await ask(extractor, outcomeMessages(asked, context, problems), 'call_outcome', outcomeJsonSchema(asked), signal);
          if ('error' in answer) {
            for (const name of wanted) problems.set(name, answer.error);
            continue;
          }
          const values = answer.json;
          const still: string[] = [];
          for (const name of wanted) {
            const value = (values as Record<string, unknown>)[name];
            const field = fields[name]!;
            if (value === null) {
              problems.delete(name);
              results[name] = field.required
                ? { value: null, source: 'model', status: 'unknown', error: 'required, but the call did not settle it' }
                : { value: null, source: 'model', status: 'known' };
              continue;
            }
            const problem = value === undefined ? 'the answer left it out' : outcomeValueProblem(field, value);
            if (problem === null) {
              problems.delete(name);
              results[name] = { value: value as OutcomeValue, source: 'model', status: 'known' };
            } else {
              problems.set(name, problem);
              still.push(name);
            }
          }
          wanted = still;
        }
        for (const name of wanted) {
          const error = `the model did not give a usable value in ${MAX_REQUESTS} requests: ${problems.get(name) ?? 'no answer'}`;
          results[name] = { value: null, source: 'model', status: 'unknown', error };
        }
      }
    }
    const ordered = Object.fromEntries(Object.keys(fields).map((name) => [name, results[name]!]));
    const errors = Object.entries(ordered).flatMap(([name, r]) => (r.error ? [`${name}: ${r.error}`] : []));
    return { values: Object.fromEntries(Object.entries(ordered).map(([name, r]) => [name, r.value])), fields: ordered, errors };
  }

  private async successOf(
    criteria: SuccessCriterion[],
    outcome: AnalysisResult['outcome'],
    call: SessionOutcome,
    session: Session,
    context: string,
    model: () => Promise<OutcomeModel | null>,
    claim: () => Promise<boolean>,
    signal: AbortSignal,
  ): Promise<NonNullable<AnalysisResult['success']>> {
    const known: Record<string, OutcomeValue | undefined> = {};
    for (const [name, field] of Object.entries(outcome?.fields ?? {})) known[name] = field.status === 'known' && field.value !== null ? field.value : undefined;
    const facts = { outcome: known, states: new Set(call.path.map((p) => p.state)), transferred: session.transferredTo !== null };
    const results: NonNullable<AnalysisResult['success']>['criteria'] = [];
    for (const criterion of criteria) {
      const kind = criterionKind(criterion) ?? 'unknown';
      if (criterion.judge === undefined) {
        results.push({ criterion: criterionText(criterion), kind, ...evaluatePlain(criterion, facts) });
        continue;
      }
      if (!(await claim())) throw new Error('the claim on this analysis was lost to another node');
      results.push({ criterion: criterionText(criterion), kind, ...(await this.judge(criterion.judge, context, model, signal)) });
    }
    return { value: overallSuccess(results.map((r) => r.met as CriterionResult)), criteria: results };
  }

  private async judge(question: string, context: string, model: () => Promise<OutcomeModel | null>, signal: AbortSignal): Promise<{ met: boolean | 'unknown'; reason: string }> {
    const judge = await model();
    if (!judge) return { met: 'unknown', reason: 'no model to judge it with: the account and the server have no language model that answers in a JSON schema' };
    let last = 'no answer';
    for (let request = 1; request <= MAX_REQUESTS; request++) {
      const answer = await ask(judge, judgeMessages(question, context, request > 1 ? last : null), 'criterion_judgement', { ...JUDGE_JSON_SCHEMA }, signal);
      if ('error' in answer) {
        last = answer.error;
        continue;
      }
      const { met, reason } = answer.json as { met?: unknown; reason?: unknown };
      if (typeof met === 'boolean' && typeof reason === 'string') return { met, reason };
      last = `the answer was not {met: true|false, reason: text}: ${JSON.stringify(answer.json).slice(0, 200)}`;
    }
    return { met: 'unknown', reason: `the model did not judge it in ${MAX_REQUESTS} requests: ${last}` };
  }
}

/** One structured request; a failure of any kind is an error to count, never thrown (but a shutdown is). */
async function ask(model: OutcomeModel, messages: Array<{ role: 'system' | 'user'; content: string }>, name: string, schema: Record<string, unknown>, signal: AbortSignal): Promise<{ json: Record<string, unknown> } | { error: string }> {
  try {
    const answer = await model.structured({ messages, schema: { name, schema }, signal });
    if (answer.kind === 'refusal') return { error: `the model refused: ${answer.text.slice(0, 200)}` };
    let json: unknown;
    try {
      json = JSON.parse(answer.text);
    } catch {
      return { error: `the answer is not JSON: ${answer.text.slice(0, 200)}` };
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) return { error: `the answer is not a JSON object: ${answer.text.slice(0, 200)}` };
    return { json: json as Record<string, unknown> };
  } catch (error) {
    signal.throwIfAborted();
    return { error: `the model (${model.provider}) failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

const SYSTEM = 'You analyse a finished call between a caller and a voice agent, for the business that runs the agent. Answer only from what the call shows; never guess.';

function outcomeMessages(fields: Record<string, OutcomeField>, context: string, problems: Map<string, string>): Array<{ role: 'system' | 'user'; content: string }> {
  const list = Object.entries(fields)
    .map(([name, field]) => `- ${name} (${field.type === 'enum' ? `one of ${(field.values ?? []).join(', ')}` : field.type}${field.required ? ', required' : ''})${field.description ? `: ${field.description}` : ''}`)
    .join('\n');
  const retry = [...problems].filter(([name]) => Object.hasOwn(fields, name)).map(([name, problem]) => `- ${name}: ${problem}`);
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content: `Fill in these fields of the call's outcome; null for a field the call did not settle.\n${list}\n${retry.length > 0 ? `\nYour last answer was not usable:\n${retry.join('\n')}\n` : ''}\n${context}`,
    },
  ];
}

function judgeMessages(question: string, context: string, lastProblem: string | null): Array<{ role: 'system' | 'user'; content: string }> {
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content: `Was this met in the call? ${question}\nAnswer met (true or false) and the reason in one sentence.${lastProblem ? `\nYour last answer was not usable: ${lastProblem}` : ''}\n\n${context}`,
    },
  ];
}

/** The call as the model reads it: variables, the states it went through, tool calls and results, the transcript (its end kept when long). */
function callText(call: SessionOutcome, session: Session): string {
  const lines = [
    `Variables at the end of the call: ${JSON.stringify(call.variables)}`,
    `States entered: ${call.path.map((p) => p.state).join(' -> ') || 'none'}`,
    `Transferred to a person: ${session.transferredTo !== null ? 'yes' : 'no'}`,
    'Tool calls:',
    ...call.tool_calls.map((t) => `- ${t.name} ${JSON.stringify(t.arguments)} (${t.status})`),
    'Tool results:',
    ...call.tool_results.map((t) => `- ${t.name}: ${t.ok ? JSON.stringify(t.result) : `failed: ${t.error ?? ''}`}`),
    'Transcript:',
  ];
  const head = lines.join('\n');
  let transcript = call.transcript.map((line) => `${line.role === 'user' ? 'Caller' : 'Agent'}: ${line.text}`).join('\n');
  if (head.length + transcript.length > MAX_CALL_CHARS) transcript = `(earlier lines left out)\n${transcript.slice(-(MAX_CALL_CHARS - Math.min(head.length, MAX_CALL_CHARS / 2)))}`;
  return `${head}\n${transcript}`;
}
