// Session hooks: every lifecycle event of a session, with the `metadata` given when it started,
// is offered to each registered hook (analytics, logging, webhooks). A hook that throws or
// rejects is logged and never affects the session.

export type HookEvent =
  | { type: 'started'; mode: 'assistant' | 'flow'; flowId: string | null; transport: string }
  | { type: 'state_changed'; from: string; to: string; tool: string }
  | { type: 'tool_called'; name: string; status: 'accepted' | 'rejected'; source: 'model' | 'simulator'; state: string; arguments: unknown; reason: string | null }
  | { type: 'ended'; reason: string; durationSecs: number; creditsChargedCents: number };

export interface HookContext {
  sessionId: string;
  accountId: string;
  metadata: Record<string, unknown>;
  /** Unix time in seconds. */
  at: number;
}

export interface SessionHook {
  readonly name: string;
  handle(event: HookEvent, context: HookContext): void | Promise<void>;
}

export interface HookLogger {
  info(object: Record<string, unknown>, message: string): void;
  warn(object: Record<string, unknown>, message: string): void;
}

export class SessionHooks {
  constructor(
    private readonly hooks: readonly SessionHook[],
    private readonly log: HookLogger,
  ) {}

  emit(event: HookEvent, context: Omit<HookContext, 'at'>): void {
    const full = { ...context, at: Date.now() / 1000 };
    for (const hook of this.hooks) {
      try {
        const result = hook.handle(event, full);
        if (result instanceof Promise) result.catch((error: unknown) => this.log.warn({ err: error, hook: hook.name }, 'session hook failed'));
      } catch (error) {
        this.log.warn({ err: error, hook: hook.name }, 'session hook failed');
      }
    }
  }
}

/** The hook that ships: one log line per lifecycle event, metadata included. */
export function loggingHook(log: HookLogger): SessionHook {
  return {
    name: 'log',
    handle(event, context) {
      // A tool call's arguments are what the caller said (names, numbers): the log keeps the call, not them.
      const logged = event.type === 'tool_called' ? { ...event, arguments: undefined } : event;
      log.info({ session: context.sessionId, account: context.accountId, metadata: context.metadata, event: logged }, `session ${event.type}`);
    },
  };
}
