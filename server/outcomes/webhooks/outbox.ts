// Session events into the webhook outbox (docs/api.md#what-a-call-leaves-behind). As a session hook
// it only keeps the event in memory (no I/O, nothing parsed: it runs on the thread that paces
// audio); a timer writes what was kept every FLUSH_MS, one durable write for all sessions, a row
// per event per endpoint that takes it. The end is different: once the session's timeline is stored
// (sessionClosed), its outcome is read and `session.ended` is written at once, with the session's
// events still waiting, so an endpoint never sees the end before the moves that led to it.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { HookContext, HookEvent, SessionHook } from '../../engine/hooks.ts';
import { newWebhookMessageId } from '../../security/webhook-signature.ts';
import type { CallStatus, NewWebhookDelivery, Session, Store, Webhook } from '../../store/store.ts';
import { sessionDetail } from '../session-detail.ts';
import { callStatusEnvelope, hookEventEnvelope, sessionEndedEnvelope, type WebhookEnvelope } from './events.ts';

export const FLUSH_MS = 250;

interface KeptEvent {
  accountId: string;
  sessionId: string;
  event: HookEvent;
  context: HookContext;
}

export interface OutboxLog {
  error(object: Record<string, unknown>, message: string): void;
}

export class WebhookOutbox implements SessionHook {
  readonly name = 'webhooks';
  private kept: KeptEvent[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** Writes and ends in progress: close() waits for them before the store closes. */
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly log: OutboxLog,
    /** Told when deliveries were written (the dispatcher's wake). */
    private readonly written: () => void,
    private readonly publicUrl: () => string,
    private readonly flushMs: number = FLUSH_MS,
  ) {}

  /** A live session event: kept in memory, written by the next flush. Cheap and synchronous. */
  handle(event: HookEvent, context: HookContext): void {
    if (event.type === 'ended') return; // sessionClosed sends it, with the whole outcome
    this.kept.push({ accountId: context.accountId, sessionId: context.sessionId, event, context });
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.track(this.flush());
      }, this.flushMs);
      this.timer.unref();
    }
  }

  /** The session's timeline is stored: its end goes into the outbox now, after its events. */
  sessionClosed(sessionId: string): Promise<void> {
    return this.track(this.writeEnd(sessionId));
  }

  /**
   * A phone call's status changed (the carrier said so): `call.status` goes into the outbox at
   * once, durably, for the account's endpoints subscribed to it, after the session's events kept
   * so far. Resolves once written; a failure is logged, never thrown at the call.
   */
  callStatus(session: Session, status: CallStatus, at = Date.now() / 1000): Promise<void> {
    return this.track(
      (async () => {
        await this.flush(session.id);
        const endpoints = await this.store.webhooks.subscribers(session.accountId, 'call.status');
        if (endpoints.length === 0) return;
        await this.enqueue(this.deliveriesFor(session.accountId, session.id, callStatusEnvelope(session, status, at), at, endpoints));
      })(),
    );
  }

  /**
   * At start: the ends an earlier run recorded but died before putting in the outbox (within
   * `sinceSecs`), so a crash between a session's end and its webhook loses nothing.
   */
  recoverMissedEnds(sinceSecs: number): Promise<void> {
    return this.track(
      (async () => {
        for (const sessionId of await this.store.webhooks.missingEnds(Date.now() / 1000 - sinceSecs, 500)) {
          await this.writeEnd(sessionId);
        }
      })(),
    );
  }

  /** Writes what is kept (shutdown) and waits for every write and end in progress. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.track(this.flush());
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private track(work: Promise<void>): Promise<void> {
    const tracked = work.catch((error: unknown) => this.log.error({ err: error }, 'could not put session events in the webhook outbox'));
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
    return tracked;
  }

  private async flush(only?: string): Promise<void> {
    const taken = only === undefined ? this.kept : this.kept.filter((k) => k.sessionId === only);
    this.kept = only === undefined ? [] : this.kept.filter((k) => k.sessionId !== only);
    if (taken.length === 0) return;
    // One look at each account's endpoints per flush: most accounts have none, and their events stop here.
    const endpointsOf = new Map<string, Webhook[]>();
    const rows: NewWebhookDelivery[] = [];
    for (const k of taken) {
      let endpoints = endpointsOf.get(k.accountId);
      if (!endpoints) endpointsOf.set(k.accountId, (endpoints = await this.store.webhooks.listByAccount(k.accountId)));
      if (endpoints.length === 0) continue;
      const envelope = hookEventEnvelope(k.event, k.context);
      if (envelope) rows.push(...this.deliveriesFor(k.accountId, k.sessionId, envelope, k.context.at, endpoints));
    }
    await this.enqueue(rows);
  }

  private async writeEnd(sessionId: string): Promise<void> {
    // The session's own earlier events first, in the same order they happened.
    await this.flush(sessionId);
    const session = await this.store.sessions.findById(sessionId);
    if (!session || session.status !== 'ended') return;
    const endpoints = await this.store.webhooks.subscribers(session.accountId, 'session.ended');
    if (endpoints.length === 0) return;
    // Reading the outcome yields between pages: a long call's transcript never holds the loop.
    const detail = await sessionDetail(this.store, session, this.publicUrl());
    await yieldToLoop();
    await this.enqueue(this.deliveriesFor(session.accountId, session.id, sessionEndedEnvelope(detail), Date.now() / 1000, endpoints));
  }

  /** `accountEndpoints`: the account's endpoints, read once per flush; those not subscribed to this event are skipped. */
  private deliveriesFor(accountId: string, sessionId: string, envelope: WebhookEnvelope, at: number, accountEndpoints: Webhook[]): NewWebhookDelivery[] {
    const endpoints = accountEndpoints.filter((e) => e.events.includes(envelope.type));
    if (endpoints.length === 0) return [];
    const payload = JSON.stringify(envelope);
    return endpoints.map((endpoint) => ({ id: newWebhookMessageId(), webhookId: endpoint.id, accountId, sessionId, eventType: envelope.type, payload, createdAt: at }));
  }

  private async enqueue(rows: NewWebhookDelivery[]): Promise<void> {
    if (rows.length === 0) return;
    await this.store.webhooks.enqueue(rows);
    this.written();
  }
}
