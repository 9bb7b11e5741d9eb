// Delivers the outbox (docs/api.md#what-a-call-leaves-behind): at least once, retried with backoff,
// off every request's and every session's path. Timers only: a delivery is picked when it falls
// due, at most `concurrency` attempts run at once, at most `perEndpoint` to one endpoint and at
// most `perAccount` for one account's endpoints, so receivers that hang for their whole timeout
// hold their account's few places, never another account's deliveries.
//
// Fairness (docs/api.md#webhooks): when places are free and several accounts wait, they take
// turns, the account served longest ago first, one delivery each per round, rather than the oldest
// delivery across all accounts going first; an account's endpoints take turns within its share.
// What is learnt of each receiver (short timeouts, pauses of an endpoint that keeps failing) is
// endpoint-health.ts's.
//
// A delivery's row is its state: an attempt's outcome and the next due time are written in one
// durable write after the attempt. A crash mid-attempt leaves the row pending and due, so the
// next start sends it again with the same webhook-id (receivers drop duplicates by that id).
import type { SecretBox } from '../../security/secret-box.ts';
import { signWebhook } from '../../security/webhook-signature.ts';
import type { Store, WebhookDelivery } from '../../store/store.ts';
import { EndpointHealth, type AttemptPlan } from './endpoint-health.ts';
import { webhookSecretContext } from './events.ts';
import { sendWebhook, type AttemptResult } from './sender.ts';

export interface DispatcherOptions {
  /** Waits (seconds) before each retry; its length is the number of retries. */
  retrySeconds: readonly number[];
  timeoutMs: number;
  concurrency: number;
  perEndpoint: number;
  /** Unset: defaultPerAccount(concurrency). */
  perAccount?: number;
  /** The timeout of an endpoint whose last two attempts timed out, until one is delivered. */
  shortTimeoutMs?: number;
  /** Failed attempts in a row that pause an endpoint. */
  pauseAfterFailures?: number;
  firstPauseSeconds?: number;
  maxPauseSeconds?: number;
  allowPrivate: boolean;
  /** Deliveries done (delivered or given up) are kept this long for the list, like timelines. */
  retentionDays: number;
  /** Told of each attempt's outcome (metrics): delivered or not, and the seconds since the event was put in the outbox. */
  onAttempt?: (attempt: { delivered: boolean; ageSecs: number }) => void;
}

export interface DispatcherLog {
  warn(object: Record<string, unknown>, message: string): void;
  error(object: Record<string, unknown>, message: string): void;
}

/** The longest the dispatcher sleeps without looking at the outbox (a safety net; wake() is the usual way). */
const MAX_SLEEP_MS = 60_000;
const DUE_BATCH = 100;
const PURGE_EVERY_MS = 60 * 60 * 1000;
/** After an attempt whose outcome could not be stored (a full disk): a pause, not a tight loop of resends. */
const PAUSE_AFTER_STORE_FAILURE_MS = 5_000;
const PURGE_BATCH = 500;
/** Accounts remembered for taking turns; past this the order starts afresh (a bound, never reached by a server's active accounts at once). */
const TURNS_KEPT = 10_000;

/**
 * An account's share of the places: a quarter of them (2 of the default 8), at least one. It
 * takes four accounts whose receivers all hang at once to fill every place, and then the short
 * timeout and the pause free them within seconds; one account on its own is slowed only while its
 * receivers are slower than its share allows (2 in flight, as one endpoint already had).
 */
export function defaultPerAccount(concurrency: number): number {
  return Math.max(1, Math.floor(concurrency / 4));
}

export class WebhookDispatcher {
  private readonly inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private readonly perEndpoint = new Map<string, number>();
  private readonly perAccount = new Map<string, number>();
  private readonly health: EndpointHealth;
  /** When each account was last served (a counter): the one served longest ago goes first. */
  private readonly turns = new Map<string, number>();
  private turn = 0;
  private timer: NodeJS.Timeout | null = null;
  private purgeTimer: NodeJS.Timeout | null = null;
  private wakeQueued = false;
  /** A look at the outbox is under way (it reads the store); a wake meanwhile runs another after it. */
  private pumping = false;
  private pumpAgain = false;
  private closed = false;
  private storeTroubleUntil = 0;

  constructor(
    private readonly store: Store,
    private readonly secrets: SecretBox,
    private readonly log: DispatcherLog,
    private readonly options: DispatcherOptions,
  ) {
    this.health = new EndpointHealth(options, log);
  }

  /** Starts delivering, the outbox left by an earlier run included. */
  start(): void {
    this.wake();
    const purge = () => void this.purge().catch((error: unknown) => this.log.error({ err: error }, 'could not forget old webhook deliveries'));
    purge();
    this.purgeTimer = setInterval(purge, PURGE_EVERY_MS);
    this.purgeTimer.unref();
  }

  private async purge(): Promise<void> {
    const cutoff = Date.now() / 1000 - this.options.retentionDays * 86_400;
    while (!this.closed && (await this.store.webhooks.purgeBefore(cutoff, PURGE_BATCH)) === PURGE_BATCH);
  }

  /** Looks at the outbox soon (new deliveries, a retry asked for, a place freed). */
  wake(): void {
    if (this.closed || this.wakeQueued) return;
    this.wakeQueued = true;
    setImmediate(() => {
      this.wakeQueued = false;
      this.pump();
    });
  }

  /**
   * Unix seconds when this endpoint's pause ends on this node, or null when it is not paused: its
   * pending deliveries wait for that (the deliveries list shows it).
   */
  pausedUntil(webhookId: string): number | null {
    return this.health.pausedUntil(webhookId);
  }

  /** Someone asked for a delivery now ("retry now"): a paused endpoint gets its probe at once. */
  probeNow(webhookId: string): void {
    this.health.endPause(webhookId);
    this.wake();
  }

  /** Stops picking deliveries and aborts the attempts in flight; they stay pending for the next start. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.purgeTimer) clearInterval(this.purgeTimer);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const running = [...this.inFlight.values()];
    for (const { controller } of running) controller.abort();
    await Promise.all(running.map((r) => r.done));
  }

  private pump(): void {
    if (this.closed) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    this.pumpOnce()
      .catch((error: unknown) => {
        this.storeTroubleUntil = Date.now() + PAUSE_AFTER_STORE_FAILURE_MS;
        this.log.error({ err: error }, 'could not read the webhook outbox');
        this.schedule(PAUSE_AFTER_STORE_FAILURE_MS);
      })
      .finally(() => {
        this.pumping = false;
        if (this.pumpAgain) {
          this.pumpAgain = false;
          this.pump();
        }
      });
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.pump(), ms);
    this.timer.unref();
  }

  private get perAccountLimit(): number {
    return this.options.perAccount ?? defaultPerAccount(this.options.concurrency);
  }

  private async pumpOnce(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const pauseLeft = this.storeTroubleUntil - Date.now();
    if (pauseLeft > 0) return this.schedule(pauseLeft);
    const now = Date.now() / 1000;
    // Each look leaves out the endpoints and accounts already at their limit, so one account's
    // backlog never fills the batch ahead of another's; it looks again while places are left and
    // the last look's picks filled an account or an endpoint (more of others' may be behind them).
    while (!this.closed && this.inFlight.size < this.options.concurrency) {
      const limit = DUE_BATCH + this.inFlight.size;
      const due = await this.store.webhooks.due(now, limit, this.heldBack(Date.now()));
      if (this.closed) return;
      const { started, filled } = this.pickInTurns(due);
      if (started === 0 || !filled || due.length < limit) break;
    }
    // Due ones held back by the limits are picked when an attempt ends (it wakes the pump); those
    // of a paused endpoint when its pause ends (the timer below).
    const next = await this.store.webhooks.nextDueAt();
    let sleepMs = next === null ? MAX_SLEEP_MS : Math.min(MAX_SLEEP_MS, Math.max(0, (next - now) * 1000));
    const pauseEnds = this.health.nextPauseEnd(Date.now());
    if (next !== null && sleepMs === 0) {
      if (pauseEnds === null) return;
      sleepMs = pauseEnds;
    } else if (pauseEnds !== null) sleepMs = Math.min(sleepMs, pauseEnds);
    this.schedule(Math.max(sleepMs, 5));
  }

  /** What the next look at the outbox leaves out: endpoints at their limit or paused, accounts at their share. */
  private heldBack(nowMs: number): { webhooks: string[]; accounts: string[] } {
    const webhooks = new Set<string>();
    for (const [id, count] of this.perEndpoint) if (count >= this.health.limit(id)) webhooks.add(id);
    for (const id of this.health.held((webhookId) => this.perEndpoint.get(webhookId) ?? 0, nowMs)) webhooks.add(id);
    const accounts = [...this.perAccount].filter(([, count]) => count >= this.perAccountLimit).map(([id]) => id);
    return { webhooks: [...webhooks], accounts };
  }

  /**
   * Starts what the places allow, accounts taking turns: the one served longest ago first, one
   * delivery each per round, each account's soonest due first. `filled`: an account or an
   * endpoint reached its limit, so more due deliveries may be behind this batch.
   */
  private pickInTurns(due: WebhookDelivery[]): { started: number; filled: boolean } {
    const byAccount = new Map<string, WebhookDelivery[]>();
    for (const delivery of due) {
      if (this.inFlight.has(delivery.id)) continue;
      const list = byAccount.get(delivery.accountId);
      if (list) list.push(delivery);
      else byAccount.set(delivery.accountId, [delivery]);
    }
    const order = [...byAccount.keys()].sort((a, b) => (this.turns.get(a) ?? -1) - (this.turns.get(b) ?? -1));
    let started = 0;
    let filled = false;
    const nowMs = Date.now();
    for (let progress = true; progress && this.inFlight.size < this.options.concurrency; ) {
      progress = false;
      for (const accountId of order) {
        if (this.inFlight.size >= this.options.concurrency) break;
        if ((this.perAccount.get(accountId) ?? 0) >= this.perAccountLimit) {
          filled = true;
          continue;
        }
        const waiting = byAccount.get(accountId)!;
        const index = this.nextOfAccount(waiting, nowMs);
        if (index < 0) {
          if (waiting.length > 0) filled = true;
          continue;
        }
        const [delivery] = waiting.splice(index, 1);
        this.begin(delivery!);
        started++;
        progress = true;
      }
    }
    return { started, filled };
  }

  /**
   * Which of an account's waiting deliveries goes next (its index; -1: none may): its endpoints
   * take turns as the accounts do, the one with the fewest attempts in flight first, each one's
   * soonest due first; an endpoint whose last attempt timed out gets one place at a time. So a
   * receiver that hangs holds one of its account's places, and the account's other endpoints keep
   * the other.
   */
  private nextOfAccount(waiting: WebhookDelivery[], nowMs: number): number {
    let best = -1;
    let bestInFlight = Infinity;
    for (let i = 0; i < waiting.length; i++) {
      const { webhookId } = waiting[i]!;
      const inFlight = this.perEndpoint.get(webhookId) ?? 0;
      if (inFlight >= bestInFlight) continue;
      if (inFlight >= this.health.limit(webhookId) || !this.health.mayTake(webhookId, inFlight, nowMs)) continue;
      best = i;
      bestInFlight = inFlight;
      if (inFlight === 0) break;
    }
    return best;
  }

  private begin(delivery: WebhookDelivery): void {
    const controller = new AbortController();
    const { webhookId, accountId } = delivery;
    this.perEndpoint.set(webhookId, (this.perEndpoint.get(webhookId) ?? 0) + 1);
    this.perAccount.set(accountId, (this.perAccount.get(accountId) ?? 0) + 1);
    if (this.turns.size >= TURNS_KEPT) this.turns.clear();
    this.turns.set(accountId, this.turn++);
    const plan: AttemptPlan = this.health.begin(webhookId);
    const done = this.attempt(delivery, controller.signal, plan.timeoutMs)
      .then((outcome) => {
        if (outcome) this.health.learn(webhookId, outcome, plan);
      })
      .catch((error: unknown) => {
        this.storeTroubleUntil = Date.now() + PAUSE_AFTER_STORE_FAILURE_MS;
        this.log.error({ err: error, delivery: delivery.id }, 'a webhook delivery attempt failed to run');
      })
      .finally(() => {
        this.inFlight.delete(delivery.id);
        this.health.end(webhookId, plan);
        this.release(this.perEndpoint, webhookId);
        this.release(this.perAccount, accountId);
        this.wake();
      });
    this.inFlight.set(delivery.id, { controller, done });
  }

  private release(counts: Map<string, number>, key: string): void {
    const left = (counts.get(key) ?? 1) - 1;
    if (left > 0) counts.set(key, left);
    else counts.delete(key);
  }

  /** One attempt, recorded; what the endpoint did (null: nothing learnt of it), 'gone' when it was deleted. */
  private async attempt(delivery: WebhookDelivery, signal: AbortSignal, timeoutMs: number): Promise<AttemptResult | 'gone' | null> {
    const webhook = await this.store.webhooks.find(delivery.accountId, delivery.webhookId);
    if (!webhook) return 'gone'; // deleted since: its deliveries were given up
    const at = Date.now() / 1000;
    let result: AttemptResult;
    let secret: string | null = null;
    try {
      secret = this.secrets.open(webhook.secretEnc, webhookSecretContext(webhook.id));
    } catch {
      // Sealed under another secret key (a data folder restored without its key): nothing can be signed.
      result = { delivered: false, statusCode: null, error: 'the signing secret cannot be read (was the secret key changed?); create the endpoint again', durationMs: 0 };
    }
    if (secret !== null) {
      const headers = signWebhook(secret, delivery.id, delivery.payload);
      result = await sendWebhook(webhook.url, delivery.payload, { ...headers }, { timeoutMs, allowPrivate: this.options.allowPrivate, signal });
      // Shutdown: the attempt is not an outcome; the row stays due for the next start.
      if (signal.aborted) return null;
    }
    const outcome = result!;
    const attemptsSoFar = delivery.attempts + 1;
    const wait = this.options.retrySeconds[attemptsSoFar - 1];
    const status = outcome.delivered ? 'delivered' : wait === undefined ? 'failed' : 'pending';
    if (status === 'failed') this.log.warn({ delivery: delivery.id, webhook: webhook.id, attempts: attemptsSoFar, error: outcome.error }, 'a webhook delivery gave up');
    await this.store.webhooks.recordAttempt(delivery.id, {
      attempt: { at, statusCode: outcome.statusCode, error: outcome.error, durationMs: outcome.durationMs },
      status,
      nextAttemptAt: status === 'pending' ? Date.now() / 1000 + wait! : null,
    });
    this.options.onAttempt?.({ delivered: outcome.delivered, ageSecs: Math.max(0, Date.now() / 1000 - delivery.createdAt) });
    // A signing secret that cannot be read says nothing of the receiver.
    return secret === null ? null : outcome;
  }
}
