// What app.ts wires in for running the server in production: the metrics (metrics.ts), the
// session traces (tracing.ts), the session's logger that names its session, account and trace,
// and the routes an operator's tools call: GET /metrics (Prometheus) and GET /ready (a load
// balancer's or Kubernetes' readiness probe), on the public listener and optionally on a second,
// private one. Metrics are off unless a token or a metrics listener is configured, tracing off
// unless a collector is: then nothing here is created, no hook registered, the store not wrapped.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import type { SessionHook } from '../engine/hooks.ts';
import type { SessionLogger } from '../engine/session.ts';
import type { ModelUsage, StartingSession } from '../engine/voice-engine.ts';
import type { ServerEvent } from '../protocol/events.ts';
import type { Store } from '../store/store.ts';
import { errorBody } from '../errors.ts';
import { AppMetrics, type MetricsSources } from './metrics.ts';
import { SessionTracing, parseOtlpHeaders, tracesUrl } from './tracing.ts';

/** A logger that makes children (pino's), for a session's own. */
export interface ChildLogger extends SessionLogger {
  child(bindings: Record<string, unknown>): ChildLogger;
}

/** Why the node should not be sent new calls now; empty when it is ready. */
export type Readiness = () => string[];

export interface ObservabilityOptions {
  /** Shorter export delay and timeouts (tests). */
  tracing?: { scheduledDelayMillis?: number; exportTimeoutMillis?: number; maxQueueSize?: number };
}

export class Observability {
  readonly metrics: AppMetrics | null;
  readonly tracing: SessionTracing | null;
  private readonly token: string | null;
  private metricsServer: Server | null = null;

  constructor(
    private readonly config: Config,
    sources: MetricsSources,
    options: ObservabilityOptions = {},
  ) {
    const o = config.observability;
    this.token = o.metricsToken ?? null;
    this.metrics = o.metricsToken || o.metricsListen ? new AppMetrics({ perAccount: o.metricsPerAccount, sources }) : null;
    const url = tracesUrl(o.otelEndpoint, o.otelTracesEndpoint);
    const metrics = this.metrics;
    this.tracing = url
      ? new SessionTracing({
          url,
          headers: parseOtlpHeaders(o.otelHeaders),
          serviceName: o.otelServiceName ?? 'voxflow',
          sampler: o.otelTracesSampler ?? 'parentbased_always_on',
          samplerArg: o.otelTracesSamplerArg,
          includeText: o.otelIncludeText,
          onDropped: (count, reason) => metrics?.spansDropped.inc({ reason }, count),
          ...options.tracing,
        })
      : null;
  }

  get enabled(): boolean {
    return this.metrics !== null || this.tracing !== null;
  }

  /** The session hook, or null when neither metrics nor tracing is on (nothing registered). */
  hook(): SessionHook | null {
    const { metrics, tracing } = this;
    if (!metrics && !tracing) return null;
    return {
      name: 'observability',
      handle(event, context) {
        metrics?.hook(event, context);
        tracing?.hook(event, context);
      },
    };
  }

  /** An event a session sent its client (the engine's observer path). */
  event(sessionId: string, event: ServerEvent): void {
    this.metrics?.event(sessionId, event);
    this.tracing?.event(sessionId, event);
  }

  /** The tokens one model response of a session took. */
  modelUsage(sessionId: string, usage: ModelUsage): void {
    this.metrics?.modelUsage(sessionId, usage);
    this.tracing?.modelUsage(sessionId, usage);
  }

  closed(sessionId: string): void {
    this.metrics?.closed(sessionId);
    this.tracing?.closed(sessionId);
  }

  /**
   * A session begins: its labels and root span, and the logger its lines go to, which names the
   * session, its account and (tracing on) its trace, so one call's lines can be found together.
   */
  sessionStarting(info: StartingSession, log: ChildLogger): SessionLogger {
    const { record, providers } = info;
    this.metrics?.sessionStarting(record.id, {
      transport: record.transport,
      account: record.accountId,
      stt: providers.stt ?? 'none',
      llm: providers.llm ?? 'none',
      tts: providers.tts,
    });
    const traceId = this.tracing?.sessionStarting(info) ?? null;
    return log.child({ session_id: record.id, account_id: record.accountId, ...(traceId ? { trace_id: traceId } : {}) });
  }

  /** The store with its calls timed (metrics on), else the store itself. */
  timedStore(store: Store): Store {
    return this.metrics ? this.metrics.timedStore(store) : store;
  }

  webhookAttempt(attempt: { delivered: boolean; ageSecs: number }): void {
    this.metrics?.webhookAttempt(attempt);
  }

  /**
   * GET /metrics (with its token; without one configured it is not served here: 404) and
   * GET /ready on the public listener; API request spans through @fastify/otel when tracing.
   * Registered before the API's routes, so the request spans cover them.
   */
  async register(app: FastifyInstance, readiness: Readiness, redactUrl: (url: string) => string): Promise<void> {
    if (this.tracing) {
      const { FastifyOtelInstrumentation } = await import('@fastify/otel');
      const instrumentation = new FastifyOtelInstrumentation({
        instrumentHooks: false,
        instrumentHandler: false,
        // Session tokens travel in URLs (/v1/ws/<token>): a span keeps only their start, as the logs do.
        requestHook: (span, request) => span.setAttribute('url.path', redactUrl(request.url)),
        // The probes and scrapes would be most of the spans and say nothing.
        ignorePaths: (route) => route.url === '/metrics' || route.url === '/ready' || route.url === '/health',
      });
      instrumentation.setTracerProvider(this.tracing.tracerProvider);
      await app.register(instrumentation.plugin());
    }
    app.get('/ready', { config: { auth: 'none', rateLimited: false }, schema: { hide: true } }, async (_request, reply) => {
      const reasons = readiness();
      return reply.status(reasons.length === 0 ? 200 : 503).send({ ready: reasons.length === 0, reasons });
    });
    const metrics = this.metrics;
    if (metrics && this.token) {
      app.get('/metrics', { config: { auth: 'none', rateLimited: false }, schema: { hide: true } }, async (request, reply) => {
        const refused = this.refusal(request.headers.authorization);
        if (refused) return reply.status(401).header('www-authenticate', 'Bearer').send(errorBody(refused.code, refused.message));
        return reply.type(metrics.contentType).send(await metrics.render());
      });
    }
    const listen = this.config.observability.metricsListen;
    if (listen) {
      app.addHook('onListen', async () => {
        if (!this.metricsServer) this.metricsServer = await this.listenForMetrics(listen, readiness, app);
      });
      // After the sessions have ended (preClose): the probe keeps answering "draining" meanwhile.
      app.addHook('onClose', async () => {
        const server = this.metricsServer;
        this.metricsServer = null;
        if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
      });
    }
  }

  /** Where the private listener listens (host:port), once listening. */
  get metricsAddress(): string | null {
    const address = this.metricsServer?.address();
    if (!address || typeof address !== 'object') return null;
    return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  }

  /** Why a scrape is refused, or null: the token compared in constant time. */
  private refusal(authorization: string | undefined): { code: string; message: string } | null {
    if (!this.token) return null;
    const given = /^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1]?.trim();
    if (!given) return { code: 'missing_credentials', message: 'GET /metrics needs the metrics token: Authorization: Bearer <VOXFLOW_METRICS_TOKEN>.' };
    const digest = (text: string) => createHash('sha256').update(text).digest();
    if (!timingSafeEqual(digest(given), digest(this.token))) return { code: 'invalid_credentials', message: 'The metrics token is not valid.' };
    return null;
  }

  private async listenForMetrics(listen: string, readiness: Readiness, app: FastifyInstance): Promise<Server> {
    const [, host, port] = /^\[?([^\]]*)\]?:(\d+)$/.exec(listen) ?? [];
    const metrics = this.metrics;
    const send = (res: ServerResponse, status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'GET') return send(res, 405, 'application/json', JSON.stringify(errorBody('method_not_allowed', 'Only GET is served here.')));
      if (path === '/ready') {
        const reasons = readiness();
        return send(res, reasons.length === 0 ? 200 : 503, 'application/json', JSON.stringify({ ready: reasons.length === 0, reasons }));
      }
      if (path === '/metrics' && metrics) {
        const refused = this.refusal(req.headers.authorization);
        if (refused) return send(res, 401, 'application/json', JSON.stringify(errorBody(refused.code, refused.message)));
        metrics.render().then(
          (text) => send(res, 200, metrics.contentType, text),
          (error: unknown) => {
            app.log.error({ err: error }, 'could not collect the metrics');
            send(res, 500, 'application/json', JSON.stringify(errorBody('internal', 'The metrics could not be collected.')));
          },
        );
        return;
      }
      send(res, 404, 'application/json', JSON.stringify(errorBody('not_found', 'Nothing is here: /metrics and /ready are.')));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(Number(port), host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    app.log.info({ address: `${host}:${(server.address() as { port: number }).port}` }, 'serving /metrics and /ready on the metrics listener');
    return server;
  }

  /** Stops the event-loop monitor and sends the last spans (a bounded wait). */
  async close(): Promise<void> {
    this.metrics?.close();
    await this.tracing?.close();
  }
}
