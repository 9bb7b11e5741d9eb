// Delivers the outbox (docs/api.md#what-a-call-leaves-behind): at least once, retried with backoff,
// off every request's and every session's path. Timers only: a delivery is picked when it falls
// due, at most `concurrency` attempts run at once and at most `perEndpoint` to one endpoint, so a
// receiver that hangs for its whole timeout holds two places, never the others' deliveries.
//
// A delivery's row is its state: an attempt's outcome and the next due time are written in one
// durable write after the attempt. A crash mid-attempt leaves the row pending and due, so the
// next start sends it again with the same webhook-id (receivers drop duplicates by that id).
import type { SecretBox } from '../../security/secret-box.ts';
import { signWebhook } from '../../security/webhook-signature.ts';
import type { Store, WebhookDelivery } from '../../store/store.ts';
import { webhookSecretContext } from './events.ts';
import { sendWebhook, type AttemptResult } from './sender.ts';

export interface DispatcherOptions {
  /** Waits (seconds) before each retry; its length is the number of retries. */
  retrySeconds: readonly number[];
  timeoutMs: number;
  concurrency: number;
  perEndpoint: number;
  allowPrivate: boolean;
  /** Deliveries done (delivered or given up) are kept this long for the list, like timelines. */
  retentionDays: number;
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

export class WebhookDispatcher {
  private readonly inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private readonly perEndpoint = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private purgeTimer: NodeJS.Timeout | null = null;
  private wakeQueued = false;
  /** A look at the outbox is under way (it reads the store); a wake meanwhile runs another after it. */
  private pumping = false;
  private pumpAgain = false;
  private closed = false;
  private pausedUntil = 0;

  constructor(
    private readonly store: Store,
    private readonly secrets: SecretBox,
    private readonly log: DispatcherLog,
    private readonly options: DispatcherOptions,
  ) {}

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
        this.pausedUntil = Date.now() + PAUSE_AFTER_STORE_FAILURE_MS;
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

  private async pumpOnce(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const pauseLeft = this.pausedUntil - Date.now();
    if (pauseLeft > 0) return this.schedule(pauseLeft);
    const now = Date.now() / 1000;
    if (this.inFlight.size < this.options.concurrency) {
      for (const delivery of await this.store.webhooks.due(now, DUE_BATCH + this.inFlight.size)) {
        if (this.closed) return;
        if (this.inFlight.size >= this.options.concurrency) break;
        if (this.inFlight.has(delivery.id)) continue;
        if ((this.perEndpoint.get(delivery.webhookId) ?? 0) >= this.options.perEndpoint) continue;
        this.begin(delivery);
      }
    }
    // Due ones held back by the limits are picked when an attempt ends (it wakes the pump).
    const next = await this.store.webhooks.nextDueAt();
    const sleepMs = next === null ? MAX_SLEEP_MS : Math.min(MAX_SLEEP_MS, Math.max(0, (next - now) * 1000));
    if (next !== null && sleepMs === 0) return;
    this.schedule(Math.max(sleepMs, 5));
  }

  private begin(delivery: WebhookDelivery): void {
    const controller = new AbortController();
    this.perEndpoint.set(delivery.webhookId, (this.perEndpoint.get(delivery.webhookId) ?? 0) + 1);
    const done = this.attempt(delivery, controller.signal)
      .catch((error: unknown) => {
        this.pausedUntil = Date.now() + PAUSE_AFTER_STORE_FAILURE_MS;
        this.log.error({ err: error, delivery: delivery.id }, 'a webhook delivery attempt failed to run');
      })
      .finally(() => {
        this.inFlight.delete(delivery.id);
        const left = (this.perEndpoint.get(delivery.webhookId) ?? 1) - 1;
        if (left > 0) this.perEndpoint.set(delivery.webhookId, left);
        else this.perEndpoint.delete(delivery.webhookId);
        this.wake();
      });
    this.inFlight.set(delivery.id, { controller, done });
  }

  private async attempt(delivery: WebhookDelivery, signal: AbortSignal): Promise<void> {
    const webhook = await this.store.webhooks.find(delivery.accountId, delivery.webhookId);
    if (!webhook) return; // deleted since: its deliveries were given up
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
      result = await sendWebhook(webhook.url, delivery.payload, { ...headers }, { timeoutMs: this.options.timeoutMs, allowPrivate: this.options.allowPrivate, signal });
      // Shutdown: the attempt is not an outcome; the row stays due for the next start.
      if (signal.aborted) return;
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
  }
}
