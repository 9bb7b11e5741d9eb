// What this node has learnt of each webhook endpoint's receiver (docs/api.md#webhooks), for the
// dispatcher: an endpoint whose last two attempts got no answer gets the short timeout until one
// is delivered, and one place at a time from its first timeout; after `pauseAfterFailures` failed
// attempts in a row it is paused (its deliveries stay pending and due, no attempt is made or
// counted), then one probe with the full timeout: delivered ends the pause, failed pauses it again
// for twice as long, up to `maxPauseSeconds`. In memory only: each node of several keeps its own,
// and a restart starts every endpoint afresh. Endpoints with nothing learnt are not kept.
import type { AttemptResult } from './sender.ts';

export interface EndpointHealthOptions {
  timeoutMs: number;
  perEndpoint: number;
  shortTimeoutMs?: number;
  pauseAfterFailures?: number;
  firstPauseSeconds?: number;
  maxPauseSeconds?: number;
}

export interface EndpointHealthLog {
  warn(object: Record<string, unknown>, message: string): void;
}

/** Timeouts in a row after which an endpoint's attempts get the short timeout. */
const TIMEOUTS_BEFORE_SHORT = 2;

interface Health {
  /** Failed attempts in a row. */
  failures: number;
  /** Attempts in a row that got no answer within their timeout. */
  timeouts: number;
  /** Unix ms when the pause ends (then one probe goes); 0: not paused. */
  pausedUntil: number;
  /** Pauses in a row (each one twice as long as the last, capped). */
  pauses: number;
  /** The probe after a pause is in flight: nothing else goes to this endpoint until it ends. */
  probing: boolean;
}

/** How one attempt was begun: whether it is a pause's probe, and its timeout. */
export interface AttemptPlan {
  probe: boolean;
  timeoutMs: number;
}

export class EndpointHealth {
  private readonly endpoints = new Map<string, Health>();

  constructor(
    private readonly options: EndpointHealthOptions,
    private readonly log: EndpointHealthLog,
  ) {}

  /** Attempts the endpoint may have in flight at once: one from its first timeout on. */
  limit(webhookId: string): number {
    return this.endpoints.get(webhookId)?.timeouts ? 1 : this.options.perEndpoint;
  }

  /** Whether the endpoint may take an attempt now, as far as its pause goes, with `inFlight` attempts running. */
  mayTake(webhookId: string, inFlight: number, nowMs: number): boolean {
    const health = this.endpoints.get(webhookId);
    if (!health || health.pausedUntil === 0) return true;
    if (health.pausedUntil > nowMs || health.probing) return false;
    // The pause is over: one probe, and only once the attempts begun before it have ended.
    return inFlight === 0;
  }

  /** The endpoints known to this node that may not take an attempt now. */
  held(inFlightOf: (webhookId: string) => number, nowMs: number): string[] {
    return [...this.endpoints.keys()].filter((id) => !this.mayTake(id, inFlightOf(id), nowMs));
  }

  /**
   * Milliseconds until the first pause still running ends (a little after, as a timer may fire a
   * millisecond early), or null when none is. A pause that has ended waits for its probe, which
   * the next look at the outbox starts; it is no reason to look again (an endpoint with nothing
   * left to send would have the pump looking every few milliseconds).
   */
  nextPauseEnd(nowMs: number): number | null {
    let soonest: number | null = null;
    for (const health of this.endpoints.values()) {
      if (health.pausedUntil <= nowMs || health.probing) continue;
      const left = health.pausedUntil - nowMs + 2;
      if (soonest === null || left < soonest) soonest = left;
    }
    return soonest;
  }

  /** Unix seconds when the endpoint's pause ends, or null when it is not paused. */
  pausedUntil(webhookId: string): number | null {
    const health = this.endpoints.get(webhookId);
    return health && health.pausedUntil > 0 ? health.pausedUntil / 1000 : null;
  }

  /** Ends a pause now: the next attempt is its probe ("retry now" was asked for). */
  endPause(webhookId: string): void {
    const health = this.endpoints.get(webhookId);
    if (health && health.pausedUntil > Date.now()) health.pausedUntil = Date.now();
  }

  /** An attempt begins: a probe after a pause gets the full timeout (a slow receiver that has come back can still answer it). */
  begin(webhookId: string): AttemptPlan {
    const health = this.endpoints.get(webhookId);
    const probe = health !== undefined && health.pausedUntil !== 0;
    if (probe) health.probing = true;
    const short = !probe && health !== undefined && health.timeouts >= TIMEOUTS_BEFORE_SHORT;
    return { probe, timeoutMs: short ? Math.min(this.options.timeoutMs, this.options.shortTimeoutMs ?? 2_000) : this.options.timeoutMs };
  }

  /** An attempt has ended, whatever came of it. */
  end(webhookId: string, plan: AttemptPlan): void {
    const health = this.endpoints.get(webhookId);
    if (plan.probe && health) health.probing = false;
  }

  /** What an attempt's outcome says of its endpoint: delivered (or the endpoint deleted) forgets its bad luck; failures in a row pause it. */
  learn(webhookId: string, outcome: AttemptResult | 'gone', plan: AttemptPlan): void {
    if (outcome === 'gone' || outcome.delivered) {
      this.endpoints.delete(webhookId);
      return;
    }
    const health = this.endpoints.get(webhookId) ?? { failures: 0, timeouts: 0, pausedUntil: 0, pauses: 0, probing: false };
    this.endpoints.set(webhookId, health);
    health.failures++;
    health.timeouts = outcome.timedOut ? health.timeouts + 1 : 0;
    // An attempt begun before the pause that fails meanwhile changes nothing of it; a probe that fails pauses again, longer.
    if (health.pausedUntil !== 0 && !plan.probe) return;
    if (!plan.probe && health.failures < (this.options.pauseAfterFailures ?? 5)) return;
    health.pauses++;
    const first = (this.options.firstPauseSeconds ?? 30) * 1000;
    const pauseMs = Math.min((this.options.maxPauseSeconds ?? 600) * 1000, first * 2 ** Math.min(health.pauses - 1, 20));
    health.pausedUntil = Date.now() + pauseMs;
    if (!plan.probe) this.log.warn({ webhook: webhookId, failures: health.failures, pause_seconds: pauseMs / 1000 }, 'a webhook endpoint keeps failing: paused, its deliveries wait');
  }
}
