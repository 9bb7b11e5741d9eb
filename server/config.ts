// The one place that reads process.env and the command line. Everything else receives a Config.
// It is over 400 lines on purpose: the schema and the table of settings (flag, variable, help) are
// one idea, kept side by side so a setting is added in one file, and a test keeps the table, --help
// and docs/hosting.md in step.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { SERVER_VENDORS } from './providers/catalog.ts';

const port = z.coerce.number().int().min(0).max(65_535);
const positiveInt = z.coerce.number().int().positive();
const url = z.string().url();
/** Empty strings in env count as unset: `FOO= npm run serve` should not configure an empty key. */
const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** A yes/no setting: a boolean (tests, Electron) or its spelling in env and flags. */
const yesNo = z.union([
  z.boolean(),
  z.enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'], { error: 'must be true or false' }).transform((v) => ['true', '1', 'yes', 'on'].includes(v)),
]);

/**
 * Time a provider may take to answer (per attempt, and between streamed chunks); each vendor's
 * own default when unset. Tests shorten it so a hung provider fails in milliseconds.
 */
const timeoutMs = positiveInt.optional();

export const DEFAULT_ASSISTANT_PROMPT =
  'You are a friendly, helpful voice assistant. Everything you say is spoken aloud: answer in one to three short sentences of plain words, with no lists, markdown or emoji.';

/** The default of VOXFLOW_SHUTDOWN_GRACE_SECONDS; the desktop app waits as long for its server. */
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 10;

export const ConfigSchema = z.object({
  host: z.string().min(1).default('127.0.0.1'),
  port: port.default(8787),
  dataDir: z.string().min(1).default('./data'),
  /** Base of the URLs handed to clients (`ws_url`); derived from host and port when unset. */
  publicUrl: url.optional(),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** json: one JSON object a line, for log collectors; pretty: readable lines. Unset: pretty on a terminal, else json. */
  logFormat: z.enum(['json', 'pretty']).optional(),
  /** Host names a loopback-bound server also answers to (besides loopback names and the public URL's). */
  allowedHosts: z.array(z.string().min(1)).default([]),
  /** Browser origins allowed to change things or open voice sockets, besides this server's own; `*` for any. */
  allowedOrigins: z.array(z.string().min(1)).default([]),
  /** Key for provider secrets at rest (base64, 32 bytes); generated in the data dir when unset. */
  secretKey: optionalText,
  /** Key that signs studio logins (base64, 32 bytes or more); generated in the data dir when unset. */
  jwtSecret: optionalText,
  /**
   * How long a graceful close (SIGTERM, SIGINT) may take, sessions ended and the store flushed,
   * before the process gives up and exits 1 saying so.
   */
  shutdownGraceSeconds: z.coerce.number().min(0.1).max(600).default(DEFAULT_SHUTDOWN_GRACE_SECONDS),
  /** How long a graceful stop lets live calls finish on their own, taking no new ones, before ending them (0: end them at once). */
  drainSeconds: z.coerce.number().min(0).max(3600).default(0),
  /** PostgreSQL: a node silent this long is gone, and the other nodes end its calls. */
  nodeTimeoutSeconds: z.coerce.number().min(1).max(3600).default(60),
  /**
   * PostgreSQL for the store (docs/hosting.md#several-nodes-on-postgresql): several nodes share it
   * behind one load balancer. Unset: the embedded sql.js store in the data dir. With it, both keys
   * (secretKey, jwtSecret) must be set (every node must read the others' secrets and logins).
   */
  databaseUrl: optionalText.refine((v) => v === undefined || /^postgres(ql)?:\/\//.test(v), { message: 'must be a postgres:// or postgresql:// URL' }),
  limits: z
    .object({
      bodyBytes: positiveInt.default(512 * 1024),
      requestTimeoutMs: positiveInt.default(30_000),
      /** Password hashes computed at once; the rest wait in line so logins cannot starve audio. */
      concurrentPasswordHashes: positiveInt.default(1),
      /** Hashes that may wait; past that, logins get 503 at once instead of queueing forever. */
      queuedPasswordHashes: positiveInt.default(64),
      /** Worker threads that parse and edit flow documents; one per spare core (1 to 4) when unset. */
      flowWorkers: positiveInt.max(64).optional(),
      /** CPU time one flow document may take to parse, validate or edit; past it, 422 flow_too_complex. */
      flowJobBudgetMs: positiveInt.default(5000),
      // An edit of every prompt of a 1,767-state flow (256 KiB, the body limit) measured 1.3-1.9 s
      // of CPU here: 5 s leaves room on a slower core; the worker, not the audio thread, spends it.
      /** Flows one account may keep; 0 for no limit (the desktop app's server). Past it: 413 flow_quota_exceeded. */
      flowsPerAccount: z.coerce.number().int().min(0).default(200),
      /**
       * MiB of flow text one account may keep, every version and draft counted; 0 for no limit.
       * It bounds what one tenant adds to the snapshot the whole server writes (about 1 ms per MiB
       * on the thread that paces audio): 20 MiB is 80 of the largest documents, or a thousand
       * saves of a 20 KiB one. A fraction is allowed (0.5 for half a MiB): a small hosting tier,
       * and the quota tests, which reach it with a few small documents instead of many large ones.
       */
      flowStorageMb: z.coerce.number().min(0).default(20),
      /**
       * Flow test runs one account may have in progress at once, over every node on PostgreSQL.
       * A model or audio run drives a whole voice session per test on this server's CPU and the
       * account's providers, so a tenant cannot fill a node with them.
       */
      testRunsPerAccount: positiveInt.default(1),
      /**
       * Steps one model or audio run may play, every test's steps times its repeats: 500 is 100
       * tests of five steps, or a 25-step test repeated 20 times. Past it: 422 test_run_too_large.
       */
      testRunMaxSteps: positiveInt.default(500),
      /** The longest one flow test run may take (any mode); then it ends with an error saying so. */
      testRunMaxSeconds: z.coerce.number().positive().default(900),
      /**
       * WebSocket upgrades being admitted at once (token, credential, store and flow checks not
       * over yet), all addresses together and per address. Past either, a new upgrade is refused
       * with 503 at_capacity before any of that work, so a flood of connects costs little and
       * the rest of the server keeps answering. One backend starting a burst of calls at once
       * (two accounts' 25 each at once in the admission tests) comes from one address, and so do all clients behind a proxy
       * the server does not trust: the per-address count leaves room for such a burst.
       */
      pendingUpgrades: positiveInt.default(256),
      pendingUpgradesPerAddress: positiveInt.default(64),
      sessionsListed: positiveInt.default(50),
      sessionTokenTtlSeconds: positiveInt.default(600),
    })
    .prefault({}),
  rateLimit: z
    .object({
      /** Signup and login attempts per IP per minute. */
      authPerMinute: positiveInt.default(20),
      /** Requests per minute of one API key or one account's JWT. */
      credentialPerMinute: positiveInt.default(1200),
      /** Requests per minute of one IP address, all routes together. */
      ipPerMinute: positiveInt.default(3000),
    })
    .prefault({}),
  /**
   * Days a session's timeline and recording are kept (docs/api.md#what-a-call-leaves-behind); the
   * session's list row stays.
   */
  retentionDays: positiveInt.default(30),
  /**
   * MiB of free disk below which /health answers 503 degraded (the disks of the data folder and
   * its recordings), before a write fails on a full disk; 0: never. A fraction is allowed.
   */
  minFreeDiskMb: z.coerce.number().min(0).default(256),
  /** Webhook delivery (docs/api.md#what-a-call-leaves-behind). */
  webhooks: z
    .object({
      /** Whether endpoints may be on loopback or private networks (the desktop app: yes; hosting: no, SSRF). */
      allowPrivate: yesNo.default(false),
      /**
       * Seconds to wait after each failed attempt before the next; one entry per retry. The
       * default is five tries over about an hour (0, 30 s, 2 min, 10 min, 45 min after the first).
       */
      retrySeconds: z.array(z.coerce.number().min(0).max(86_400)).max(20).default([30, 120, 600, 2700]),
      /** One attempt's time for the whole answer (connect, headers, body). */
      timeoutMs: positiveInt.default(10_000),
      /** Attempts in flight at once, all endpoints together, and for one endpoint. */
      concurrency: positiveInt.default(8),
      perEndpoint: positiveInt.default(2),
      /** Attempts in flight at once for one account's endpoints; unset: a quarter of `concurrency` (at least 1). */
      perAccount: positiveInt.optional(),
      /** The timeout of an endpoint whose last two attempts got no answer, until one is delivered. */
      shortTimeoutMs: positiveInt.default(2_000),
      /** Consecutive failed attempts after which an endpoint is paused. */
      pauseAfterFailures: positiveInt.default(5),
      /** An endpoint's first pause, doubled at each failed probe up to `maxPauseSeconds`. */
      firstPauseSeconds: z.coerce.number().positive().max(86_400).default(30),
      maxPauseSeconds: z.coerce.number().positive().max(86_400).default(600),
    })
    .prefault({}),
  /**
   * scrypt cost; N = 2^17 (128 MiB a hash) makes a stolen hash slow to guess. Tests lower it, never
   * production.
   */
  passwordHashCost: z.coerce.number().int().min(10).max(20).default(17),
  providers: z
    .object({
      stt: z
        .object({ provider: z.enum(SERVER_VENDORS.stt).default('none'), apiKey: optionalText, baseUrl: optionalText, model: optionalText, timeoutMs })
        .prefault({}),
      llm: z
        .object({ provider: z.enum(SERVER_VENDORS.llm).default('none'), apiKey: optionalText, baseUrl: optionalText, model: optionalText, timeoutMs })
        .prefault({}),
      tts: z
        .object({ provider: z.enum(SERVER_VENDORS.tts).default('flite'), apiKey: optionalText, baseUrl: optionalText, model: optionalText, voice: optionalText, timeoutMs })
        .prefault({}),
    })
    .prefault({}),
  engine: z
    .object({
      /** System prompt of assistant-mode sessions. */
      assistantPrompt: z.string().min(1).default(DEFAULT_ASSISTANT_PROMPT),
      language: z.string().min(2).default('en'),
      /** Live voice sessions at once; past that, new ones get 503. */
      maxSessions: positiveInt.default(100),
      /** WebRTC peer connections at once (each holds UDP sockets and codec state). */
      maxPeerConnections: positiveInt.default(50),
      /** Live voice sessions one account may hold at once (any transport); 0 for no limit (the desktop app's server). */
      sessionsPerAccount: z.coerce.number().int().min(0).default(10),
      /** The longest a voice session lasts; then it ends with `max_duration`. 0: no limit. */
      maxSessionSeconds: z.coerce.number().min(0).default(3600),
      /** A session with no caller speech and no client message (ping aside) this long ends with `idle`. 0: never. */
      idleEndSeconds: z.coerce.number().min(0).default(300),
      /**
       * An end-of-turn model (ONNX, Smart Turn v3's input and output; docs/providers.md). Loaded at
       * start: a file that cannot be used stops the start, saying why.
       */
      turnModel: optionalText,
      /**
       * Turn-taking (docs/flows.md#turn-taking) under every flow's `settings.turn` and state's
       * `turn`, named as those keys are. Unset: the engine's defaults.
       */
      turn: z
        .object({
          minInterruptionWords: z.coerce.number().int().min(0).max(10).optional(),
          backchannels: z.enum(['ignore', 'interrupt']).optional(),
          endpointingMs: z.coerce.number().int().min(100).max(5_000).optional(),
          maxEndpointingMs: z.coerce.number().int().min(100).max(10_000).optional(),
        })
        .prefault({}),
    })
    .prefault({}),
  /** Phone calls one account may place: per minute, and at once (counted over every node on PostgreSQL). */
  outboundCalls: z
    .object({
      perMinute: positiveInt.default(10),
      concurrent: positiveInt.default(5),
    })
    .prefault({}),
  /**
   * Where each carrier's REST API is (hang-up, transfer, outbound calls); unset: the carrier's own.
   * An operator's setting, so a loopback or private address is allowed here (a carrier's
   * regional edge, or a test's fake on this machine).
   */
  carriers: z
    .object({
      twilioApiUrl: url.optional(),
      telnyxApiUrl: url.optional(),
      plivoApiUrl: url.optional(),
    })
    .prefault({}),
  /**
   * Running it in production (docs/hosting.md#prometheus-and-opentelemetry): metrics for
   * Prometheus, traces for an OpenTelemetry collector. Both off unless configured.
   */
  observability: z
    .object({
      /** The bearer token GET /metrics asks for; unset, the public listener does not serve /metrics (404). */
      metricsToken: optionalText,
      /** host:port of a second listener that serves only /metrics and /ready (a private port; no token unless metricsToken is set). */
      metricsListen: optionalText.refine((v) => v === undefined || hostPort(v) !== null, { message: 'must be host:port, e.g. 127.0.0.1:9464' }),
      /** Label the session and credit counters with the account id (one series per account: mind the count). */
      metricsPerAccount: yesNo.default(false),
      /** The collector's OTLP/HTTP base URL (`/v1/traces` is added), as OTEL_EXPORTER_OTLP_ENDPOINT. */
      otelEndpoint: optionalText.refine((v) => v === undefined || /^https?:\/\//.test(v), { message: 'must be an http:// or https:// URL' }),
      /** The full traces URL, as OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; wins over otelEndpoint. */
      otelTracesEndpoint: optionalText.refine((v) => v === undefined || /^https?:\/\//.test(v), { message: 'must be an http:// or https:// URL' }),
      /** Headers sent to the collector, `key=value,key2=value2` (W3C baggage style, values URL-encoded). */
      otelHeaders: optionalText,
      otelServiceName: optionalText,
      otelTracesSampler: z
        .enum(['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'], { error: 'must be always_on, always_off, traceidratio or parentbased_ (always_on, always_off, traceidratio)' })
        .optional(),
      /** The ratio of the traceidratio samplers, 0 to 1. */
      otelTracesSamplerArg: z.coerce.number().min(0).max(1).optional(),
      /** Put what was said (transcripts, tool arguments' text) into span attributes; off: never. */
      otelIncludeText: yesNo.default(false),
    })
    .prefault({}),
  /**
   * The SIP endpoint (docs/sip.md): off unless it listens somewhere. Each entry is
   * `udp:<host>:<port>`, `tcp:<host>:<port>` or `tls:<host>:<port>` (port 0: any free one, as tests use).
   */
  sip: z
    .object({
      listen: z
        .array(z.string().regex(/^(udp|tcp|tls):(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.\-]+):(\d{1,5})$/, 'must be udp:<host>:<port>, tcp:<host>:<port> or tls:<host>:<port>, e.g. udp:0.0.0.0:5060'))
        .default([]),
      /** RTP ports for calls' audio, an even one per call: `20000-20999`, or `0` for any the OS picks. */
      rtpPorts: z
        .string()
        .regex(/^\s*(0|\d{4,5}\s*-\s*\d{4,5})\s*$/, 'must be a range such as 20000-20999, or 0 for any free port')
        .default('20000-20999'),
      /** A tls: listener's certificate (chain) and private key: paths of PEM files, read at start. */
      tlsCert: optionalText,
      tlsKey: optionalText,
      /** The address put in SDP and Contact, where peers send RTP and requests; the listening host when unset (a wildcard: the first non-loopback IPv4). */
      mediaAddress: optionalText,
      /**
       * Register to a trunk or registrar, over UDP, TCP or TLS: `[sips:]<user>@<host>[:<port>][;expires=<s>][;retry=<s>][;auth_user=<name>][;transport=tcp|tls]`.
       * The password is never in it (a flag shows in the process list): registerPassword.
       */
      register: optionalText.transform((v, ctx) => {
        if (v === undefined) return undefined;
        const target = parseRegisterTarget(v);
        if (!target) {
          ctx.addIssue({ code: 'custom', message: 'must be <user>@<host>[:<port>], optionally with ;expires=<60-86400> ;retry=<1-300> ;auth_user=<name> ;transport=<udp|tcp|tls> (sips: in front: TLS), e.g. voxflow@sip.example.com (the password goes in VOXFLOW_SIP_REGISTER_PASSWORD, never here)' });
          return z.NEVER;
        }
        return target;
      }),
      /** The registration's password (environment only). */
      registerPassword: optionalText,
      /** The CA certificates (a PEM file) a registrar's TLS certificate is checked against; the system's CAs when unset. */
      registerCa: optionalText,
      /** Where calls we place (POST /v1/calls from a sip number) are sent: `<host>[:<port>]`; the registrar when unset. */
      outboundProxy: optionalText.refine((v) => v === undefined || /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/.test(v), { message: 'must be <host>[:<port>], e.g. sip.trunk.example:5060' }),
    })
    .prefault({}),
  ice: z
    .object({
      /** STUN server URLs, e.g. stun:stun.example.com:3478; none needed on one machine or a LAN. */
      stunUrls: z.array(z.string().min(1)).default([]),
      /** TURN server URLs, e.g. turn:turn.example.com:3478?transport=udp. */
      turnUrls: z.array(z.string().min(1)).default([]),
      /** The TURN server's shared secret (TURN REST API, coturn's static-auth-secret). */
      turnSecret: optionalText,
      ttlSeconds: positiveInt.default(3600),
    })
    .prefault({}),
});

/** Where and as whom Voxflow registers (VOXFLOW_SIP_REGISTER). */
export interface RegisterTarget {
  user: string;
  host: string;
  port: number;
  expires: number;
  /** Seconds before the first try again after a failed REGISTER; each further wait doubles, up to 5 minutes. */
  retry: number;
  /** The digest username, when the trunk's differs from the registered user. */
  authUser: string;
  /** `;transport=tcp` or `tls` (also `sips:`): REGISTER over a TCP or TLS connection we keep open (the default is UDP). */
  transport: 'udp' | 'tcp' | 'tls';
}

/**
 * Reads `user@host[:port][;expires=<s>][;retry=<s>][;auth_user=<name>][;transport=udp|tcp|tls]`, with `sip:`
 * or `sips:` (TLS, port 5061 unless given) in front; null when malformed, or when it carries a
 * password (`user:password@…`), which a flag must never hold.
 */
export function parseRegisterTarget(text: string): RegisterTarget | null {
  const match = /^(sips?:)?([A-Za-z0-9_.!~*'()&=+$,%-]+)@(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?((?:;[a-z_]+=[A-Za-z0-9_.+-]+)*)$/.exec(text.trim());
  if (!match || match[2]!.includes(':')) return null;
  const secure = match[1]?.toLowerCase() === 'sips:';
  const target: RegisterTarget = { user: match[2]!, host: match[3]!.replace(/^\[(.*)\]$/, '$1'), port: 0, expires: 300, retry: 5, authUser: match[2]!, transport: secure ? 'tls' : 'udp' };
  for (const part of (match[5] ?? '').split(';').slice(1)) {
    const [name, value = ''] = part.split('=');
    if (name === 'expires' && /^\d+$/.test(value) && Number(value) >= 60 && Number(value) <= 86400) target.expires = Number(value);
    else if (name === 'retry' && /^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 300) target.retry = Number(value);
    else if (name === 'auth_user') target.authUser = value;
    else if (name === 'transport' && (value === 'udp' || value === 'tcp' || value === 'tls') && !(secure && value !== 'tls')) target.transport = value;
    else return null;
  }
  target.port = match[4] ? Number(match[4]) : target.transport === 'tls' ? 5061 : 5060;
  if (target.port < 1 || target.port > 65535) return null;
  return target;
}

type DeepReadonly<T> = T extends (infer E)[] ? readonly DeepReadonly<E>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

/**
 * The server's settings, frozen once made: nothing changes them while the server runs. A
 * `publicUrl` left unset is derived from the listening address (see publicUrlFor), which with
 * port 0 is known only once the server listens.
 */
/** `host:port` (an IPv6 host in brackets) split, or null when it is not one. */
export function hostPort(value: string): { host: string; port: number } | null {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(value.trim());
  if (!m) return null;
  const port = Number(m[2]);
  if (port > 65_535) return null;
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

export type Config = DeepReadonly<z.infer<typeof ConfigSchema> & { dataDir: string }>;
export type ConfigInput = z.input<typeof ConfigSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Builds a Config from an object (tests, Electron) with defaults filled in and paths resolved. */
export function makeConfig(input: ConfigInput = {}): Config {
  const parsed = ConfigSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const c = parsed.data;
  return deepFreeze({
    ...c,
    dataDir: resolve(c.dataDir),
    publicUrl: c.publicUrl?.replace(/\/+$/, ''),
  });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Where clients reach this server: the configured public URL, else the listening address (a wildcard host shown as loopback). */
export function publicUrlFor(config: Config, listeningPort: number): string {
  if (config.publicUrl) return config.publicUrl;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${listeningPort}`;
}

export interface CliOptions {
  serve: boolean;
  help: boolean;
  config: ConfigInput;
}

/**
 * One row per setting: the environment variable, the flag (none for secrets: a flag would show
 * them to anyone who can list processes), where the value goes in the Config, and its help.
 * parseCommandLine, --help and the settings table in docs/hosting.md all come from this list (a
 * test keeps the table in step).
 */
export interface Setting {
  env: string;
  /** The long flag without its dashes; absent for settings read from the environment only. */
  flag?: string;
  /** Dot path into ConfigInput. */
  path: string;
  /** How the value is written in --help, e.g. <addr>. */
  value: string;
  help: string;
  /** The default as shown in --help; absent when there is none. */
  shownDefault?: string;
  /** Comma-separated list. */
  list?: true;
  /** A yes/no flag that may stand alone (`--allow-private-webhooks`), meaning yes. */
  switch?: true;
}

const flagOf = (env: string) => env.replace(/^VOXFLOW_/, '').toLowerCase().replaceAll('_', '-');
const setting = (env: string, path: string, value: string, help: string, extra: Partial<Setting> = {}): Setting => ({ env, flag: flagOf(env), path, value, help, ...extra });
const secret = (env: string, path: string, help: string): Setting => ({ env, path, value: '<secret>', help });

function providerSettings(kind: 'stt' | 'llm' | 'tts', what: string, vendors: readonly string[], shownDefault: string, modelExample: string): Setting[] {
  const upper = kind.toUpperCase();
  return [
    setting(`VOXFLOW_${upper}_PROVIDER`, `providers.${kind}.provider`, `<${vendors.join('|')}>`, what, { shownDefault }),
    secret(`VOXFLOW_${upper}_API_KEY`, `providers.${kind}.apiKey`, `the server's key for ${what}`),
    setting(`VOXFLOW_${upper}_BASE_URL`, `providers.${kind}.baseUrl`, '<url>', `endpoint for ${what} (a local OpenAI-compatible server)`),
    setting(`VOXFLOW_${upper}_MODEL`, `providers.${kind}.model`, '<name>', `model for ${what}, e.g. ${modelExample}`),
  ];
}

export const SETTINGS: readonly Setting[] = [
  setting('VOXFLOW_HOST', 'host', '<addr>', 'address to listen on (0.0.0.0 for all)', { shownDefault: '127.0.0.1' }),
  setting('VOXFLOW_PORT', 'port', '<n>', 'port to listen on, 0 for any free one', { shownDefault: '8787' }),
  setting('VOXFLOW_DATA_DIR', 'dataDir', '<path>', 'database, journal and keys', { shownDefault: './data' }),
  setting('VOXFLOW_PUBLIC_URL', 'publicUrl', '<url>', 'base URL clients reach us at (https:// gives wss:// ws_urls)', { shownDefault: 'http://host:port' }),
  setting('VOXFLOW_LOG_LEVEL', 'logLevel', '<level>', 'fatal|error|warn|info|debug|trace|silent', { shownDefault: 'info' }),
  setting('VOXFLOW_LOG_FORMAT', 'logFormat', '<format>', 'json (a JSON object a line, for log collectors) or pretty (readable lines)', { shownDefault: 'pretty on a terminal, else json' }),
  setting('VOXFLOW_ALLOWED_HOSTS', 'allowedHosts', '<names>', 'comma-separated host names a loopback-bound server also answers to', { list: true }),
  setting('VOXFLOW_ALLOWED_ORIGINS', 'allowedOrigins', '<origins>', "comma-separated browser origins that may call the API besides the server's own (* for any)", { list: true }),
  secret('VOXFLOW_SECRET_KEY', 'secretKey', 'base64 32-byte key for provider keys at rest (default: generated in the data dir)'),
  secret('VOXFLOW_JWT_SECRET', 'jwtSecret', 'base64 key of 32 bytes or more that signs studio logins (default: generated in the data dir)'),
  setting('VOXFLOW_DRAIN_SECONDS', 'drainSeconds', '<s>', 'on SIGTERM/SIGINT, how long live calls may go on to their own end while /ready says 503 and no new session is taken; then the rest are ended (a second signal ends them at once)', { shownDefault: '0' }),
  setting('VOXFLOW_SHUTDOWN_GRACE_SECONDS', 'shutdownGraceSeconds', '<s>', 'how long a graceful stop (SIGTERM, SIGINT) may take to end sessions and flush the store; past it the process exits 1 saying so', { shownDefault: String(DEFAULT_SHUTDOWN_GRACE_SECONDS) }),
  setting('VOXFLOW_NODE_TIMEOUT_SECONDS', 'nodeTimeoutSeconds', '<s>', "on PostgreSQL, a node silent this long is gone and the other nodes end its calls (server_restarted); nodes say they are alive every sixth of it", { shownDefault: '60' }),
  setting('VOXFLOW_DATABASE_URL', 'databaseUrl', '<postgres://…>', 'PostgreSQL for the store, shared by every node (default: the embedded store in the data dir); needs VOXFLOW_SECRET_KEY and VOXFLOW_JWT_SECRET; give its password in PGPASSWORD or ~/.pgpass, since the process list shows flags'),
  ...providerSettings('stt', 'speech to text', SERVER_VENDORS.stt, 'none', 'nova-3, whisper-1'),
  ...providerSettings('llm', 'the language model', SERVER_VENDORS.llm, 'none', 'gpt-4o-mini, llama3.1'),
  ...providerSettings('tts', 'text to speech', SERVER_VENDORS.tts, 'flite', 'gpt-4o-mini-tts, aura-2-thalia-en'),
  setting('VOXFLOW_TTS_VOICE', 'providers.tts.voice', '<name>', 'voice of the text-to-speech provider'),
  setting('VOXFLOW_ASSISTANT_PROMPT', 'engine.assistantPrompt', '<text>', 'system prompt of assistant-mode sessions'),
  setting('VOXFLOW_LANGUAGE', 'engine.language', '<code>', 'language of speech recognition', { shownDefault: 'en' }),
  setting('VOXFLOW_MIN_INTERRUPTION_WORDS', 'engine.turn.minInterruptionWords', '<n>', 'words the caller must say over the agent to stop it, 0: any speech stops it at once (a flow\'s turn.min_interruption_words wins)', { shownDefault: '1' }),
  setting('VOXFLOW_BACKCHANNELS', 'engine.turn.backchannels', '<ignore|interrupt>', '"uh-huh", "yeah", "I see" over the agent: ignored, or an interruption (a flow\'s turn.backchannels wins)', { shownDefault: 'ignore' }),
  setting('VOXFLOW_ENDPOINTING_MS', 'engine.turn.endpointingMs', '<ms>', "the silence that usually ends the caller's turn (a flow's turn.endpointing_ms wins)", { shownDefault: '800' }),
  setting('VOXFLOW_MAX_ENDPOINTING_MS', 'engine.turn.maxEndpointingMs', '<ms>', "the longest silence waited for after unfinished words; equal to the usual one: a fixed wait (a flow's turn.max_endpointing_ms wins)", { shownDefault: '1500' }),
  setting('VOXFLOW_MAX_SESSIONS', 'engine.maxSessions', '<n>', 'live voice sessions at once', { shownDefault: '100' }),
  setting('VOXFLOW_MAX_PEER_CONNECTIONS', 'engine.maxPeerConnections', '<n>', 'WebRTC connections at once', { shownDefault: '50' }),
  setting('VOXFLOW_SESSIONS_PER_ACCOUNT', 'engine.sessionsPerAccount', '<n>', 'live voice sessions one account may hold at once, 0 for no limit (past it: 429 too_many_sessions)', { shownDefault: '10' }),
  setting('VOXFLOW_MAX_SESSION_SECONDS', 'engine.maxSessionSeconds', '<s>', 'longest a voice session lasts, then it ends with max_duration (0: no limit)', { shownDefault: '3600' }),
  setting('VOXFLOW_IDLE_END_SECONDS', 'engine.idleEndSeconds', '<s>', 'a voice session with no caller speech and no client message this long ends with idle (0: never)', { shownDefault: '300' }),
  setting('VOXFLOW_TURN_MODEL', 'engine.turnModel', '<path>', "an end-of-turn model: an ONNX file with Smart Turn v3's input and output (the server does not start if it cannot load it)"),
  setting('VOXFLOW_OUTBOUND_CALLS_PER_MINUTE', 'outboundCalls.perMinute', '<n>', 'phone calls one account may place per minute, over every node', { shownDefault: '10' }),
  setting('VOXFLOW_OUTBOUND_CONCURRENT_CALLS', 'outboundCalls.concurrent', '<n>', 'outbound phone calls one account may have live at once, over every node', { shownDefault: '5' }),
  setting('VOXFLOW_TWILIO_API_URL', 'carriers.twilioApiUrl', '<url>', "Twilio's REST API (hang-up, transfer, outbound calls)", { shownDefault: 'https://api.twilio.com' }),
  setting('VOXFLOW_TELNYX_API_URL', 'carriers.telnyxApiUrl', '<url>', "Telnyx's REST API", { shownDefault: 'https://api.telnyx.com' }),
  setting('VOXFLOW_PLIVO_API_URL', 'carriers.plivoApiUrl', '<url>', "Plivo's REST API", { shownDefault: 'https://api.plivo.com' }),
  setting('VOXFLOW_SIP_LISTEN', 'sip.listen', '<udp|tcp|tls:host:port,…>', 'comma-separated SIP listeners, e.g. udp:0.0.0.0:5060,tcp:0.0.0.0:5060,tls:0.0.0.0:5061 (default: SIP off)', { list: true }),
  setting('VOXFLOW_SIP_TLS_CERT', 'sip.tlsCert', '<file.pem>', "a tls: listener's certificate, PEM (its chain after it)"),
  setting('VOXFLOW_SIP_TLS_KEY', 'sip.tlsKey', '<file.pem>', "a tls: listener's private key, PEM (readable by the server alone)"),
  setting('VOXFLOW_SIP_RTP_PORTS', 'sip.rtpPorts', '<first-last>', "UDP ports for SIP calls' audio (RTP), one even port a call; 0 for any free port", { shownDefault: '20000-20999' }),
  setting('VOXFLOW_SIP_MEDIA_ADDRESS', 'sip.mediaAddress', '<ip>', 'IPv4 address peers reach our RTP and SIP at, put in SDP and Contact (behind NAT: the public one)', { shownDefault: 'the SIP listening address' }),
  setting('VOXFLOW_SIP_REGISTER', 'sip.register', '<user@host[:port][;…]>', "REGISTER to a SIP trunk or registrar and take the calls it sends (docs/sip.md); ;expires=<s> (default 300), ;retry=<s> (the first wait after a failure, default 5), ;auth_user=<name>, ;transport=tcp|tls (or sips:); the password is VOXFLOW_SIP_REGISTER_PASSWORD"),
  setting('VOXFLOW_SIP_REGISTER_CA', 'sip.registerCa', '<file.pem>', "the CA certificates a TLS registrar's certificate is checked against, PEM (default: the system's)"),
  secret('VOXFLOW_SIP_REGISTER_PASSWORD', 'sip.registerPassword', 'the password of VOXFLOW_SIP_REGISTER (digest authentication)'),
  setting('VOXFLOW_SIP_OUTBOUND_PROXY', 'sip.outboundProxy', '<host[:port]>', 'where calls placed from sip numbers (POST /v1/calls) are sent, answering its challenges with the registration\'s user and password', { shownDefault: 'the VOXFLOW_SIP_REGISTER registrar' }),
  setting('VOXFLOW_STUN_URLS', 'ice.stunUrls', '<urls>', 'comma-separated STUN URLs for WebRTC', { list: true }),
  setting('VOXFLOW_TURN_URLS', 'ice.turnUrls', '<urls>', 'comma-separated TURN URLs for WebRTC', { list: true }),
  secret('VOXFLOW_TURN_SECRET', 'ice.turnSecret', 'TURN REST shared secret (coturn static-auth-secret)'),
  setting('VOXFLOW_ICE_TTL_SECONDS', 'ice.ttlSeconds', '<n>', 'lifetime of TURN credentials', { shownDefault: '3600' }),
  setting('VOXFLOW_FLOW_WORKERS', 'limits.flowWorkers', '<n>', 'worker threads that parse and edit flow documents', { shownDefault: 'cores − 1, 1 to 4' }),
  setting('VOXFLOW_FLOW_JOB_BUDGET_MS', 'limits.flowJobBudgetMs', '<ms>', 'CPU time one flow document may take to parse or edit (past it: 422 flow_too_complex)', { shownDefault: '5000' }),
  setting('VOXFLOW_FLOWS_PER_ACCOUNT', 'limits.flowsPerAccount', '<n>', 'flows one account may keep, 0 for no limit (past it: 413 flow_quota_exceeded)', { shownDefault: '200' }),
  setting('VOXFLOW_FLOW_STORAGE_MB', 'limits.flowStorageMb', '<MiB>', "MiB of flow text one account may keep, all versions and drafts counted (a fraction such as 0.5 allowed), 0 for no limit (past it: 413 flow_quota_exceeded)", { shownDefault: '20' }),
  setting('VOXFLOW_TEST_RUNS_PER_ACCOUNT', 'limits.testRunsPerAccount', '<n>', 'flow test runs one account may have in progress at once, over every node (past it: 429 test_run_in_progress)', { shownDefault: '1' }),
  setting('VOXFLOW_TEST_RUN_MAX_STEPS', 'limits.testRunMaxSteps', '<n>', 'steps one model or audio test run may play, tests × repeats × steps (past it: 422 test_run_too_large)', { shownDefault: '500' }),
  setting('VOXFLOW_TEST_RUN_MAX_SECONDS', 'limits.testRunMaxSeconds', '<s>', 'longest one flow test run may take; then it ends with an error saying so', { shownDefault: '900' }),
  setting('VOXFLOW_PENDING_UPGRADES', 'limits.pendingUpgrades', '<n>', 'WebSocket connects being admitted at once (past it: 503 at_capacity at the upgrade, before any check)', { shownDefault: '256' }),
  setting('VOXFLOW_PENDING_UPGRADES_PER_ADDRESS', 'limits.pendingUpgradesPerAddress', '<n>', 'WebSocket connects of one client address being admitted at once (past it: 503 at_capacity)', { shownDefault: '64' }),
  setting('VOXFLOW_RETENTION_DAYS', 'retentionDays', '<days>', 'days session timelines and recordings are kept', { shownDefault: '30' }),
  setting('VOXFLOW_MIN_FREE_DISK_MB', 'minFreeDiskMb', '<MiB>', 'free disk space below which GET /health answers 503 degraded, for the data folder and its recordings (0: never)', { shownDefault: '256' }),
  secret('VOXFLOW_METRICS_TOKEN', 'observability.metricsToken', 'bearer token GET /metrics asks for; unset: the public listener does not serve /metrics (404)'),
  setting('VOXFLOW_METRICS_LISTEN', 'observability.metricsListen', '<host:port>', 'a second listener serving only /metrics and /ready, e.g. 127.0.0.1:9464 (no token there unless VOXFLOW_METRICS_TOKEN is set)'),
  setting('VOXFLOW_METRICS_PER_ACCOUNT', 'observability.metricsPerAccount', '[yes|no]', 'label the session and credit counters with the account id (a series per account)', { shownDefault: 'no', switch: true }),
  { env: 'OTEL_EXPORTER_OTLP_ENDPOINT', flag: 'otel-endpoint', path: 'observability.otelEndpoint', value: '<url>', help: 'OpenTelemetry collector (OTLP/HTTP) base URL; each session becomes a trace. Unset: no tracing' },
  { env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', path: 'observability.otelTracesEndpoint', value: '<url>', help: 'the full OTLP/HTTP traces URL, instead of the base URL + /v1/traces' },
  { env: 'OTEL_EXPORTER_OTLP_HEADERS', path: 'observability.otelHeaders', value: '<secret>', help: 'headers sent to the collector, key=value,key2=value2 (e.g. its API key)' },
  { env: 'OTEL_SERVICE_NAME', flag: 'otel-service-name', path: 'observability.otelServiceName', value: '<name>', help: 'service.name of the traces', shownDefault: 'voxflow' },
  { env: 'OTEL_TRACES_SAMPLER', flag: 'otel-traces-sampler', path: 'observability.otelTracesSampler', value: '<sampler>', help: 'always_on|always_off|traceidratio|parentbased_always_on|parentbased_always_off|parentbased_traceidratio', shownDefault: 'parentbased_always_on' },
  { env: 'OTEL_TRACES_SAMPLER_ARG', flag: 'otel-traces-sampler-arg', path: 'observability.otelTracesSamplerArg', value: '<ratio>', help: 'the ratio (0 to 1) of the traceidratio samplers', shownDefault: '1' },
  setting('VOXFLOW_OTEL_INCLUDE_TEXT', 'observability.otelIncludeText', '[yes|no]', "put what was said (transcripts) into the spans; off, spans carry timings, names and counts only", { shownDefault: 'no', switch: true }),
  setting('VOXFLOW_ALLOW_PRIVATE_WEBHOOKS', 'webhooks.allowPrivate', '[yes|no]', 'let webhook endpoints be on loopback or private networks (on in the desktop app)', { shownDefault: 'no', switch: true }),
  setting('VOXFLOW_WEBHOOK_RETRY_SECONDS', 'webhooks.retrySeconds', '<s,s,…>', 'comma-separated waits before each retry of a failed webhook delivery', { shownDefault: '30,120,600,2700', list: true }),
];

/** A vendor's usual key variable fills in a missing VOXFLOW_<KIND>_API_KEY for that vendor. */
export const VENDOR_KEY_VARIABLES: Record<string, string> = { openai: 'OPENAI_API_KEY', deepgram: 'DEEPGRAM_API_KEY' };

function usage(): string {
  const flagged = SETTINGS.filter((s) => s.flag);
  const left = (s: Setting) => `--${s.flag} ${s.value}`;
  const width = Math.max(...flagged.map((s) => left(s).length));
  const lines = flagged.map((s) => `  ${left(s).padEnd(width)}  ${s.env}${s.shownDefault ? ` (default ${s.shownDefault})` : ''}\n      ${s.help}`);
  const secrets = SETTINGS.filter((s) => !s.flag).map((s) => `  ${s.env}\n      ${s.help}`);
  return `Usage: voxflow --serve [options]

Runs the Voxflow server headless: the hosted API and the voice engine router.

Options (each also read from the environment variable shown; a flag wins over it):
${lines.join('\n')}
  ${'--help'.padEnd(width)}  this text
Environment only (secrets are never flags: the process list would show them):
${secrets.join('\n')}
  ${Object.values(VENDOR_KEY_VARIABLES).join(', ')}
      used for that vendor when its VOXFLOW_*_API_KEY is unset
Other commands (each with its own --help):
  voxflow test FLOW.yaml TESTS.yaml
      runs a flow's tests without a server
  voxflow replay --server URL FLOW_ID   (key in VOXFLOW_API_KEY, or --api-key)
      replays a flow's recorded calls against its draft on a running server
  voxflow migrate-store --from DATA_DIR --to postgres://…
      copies an embedded data dir into an empty PostgreSQL database
`;
}

export const USAGE = usage();

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
  node[keys.at(-1)!] = value;
}

function readValue(setting: Setting, raw: string): unknown {
  return setting.list ? raw.split(',').map((v) => v.trim()).filter(Boolean) : raw;
}

/** Reads flags and env; flags win over env. Throws ConfigError on an unknown flag or a missing value. */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): CliOptions {
  const config: Record<string, unknown> = {};
  for (const s of SETTINGS) {
    const value = env[s.env];
    // Empty variables count as unset: `FOO= npm run serve` should not configure an empty value.
    if (value !== undefined && value.trim() !== '') setPath(config, s.path, readValue(s, value));
  }
  const providers = (config.providers ?? {}) as Record<string, Record<string, unknown>>;
  for (const kind of ['stt', 'llm', 'tts']) {
    const chosen = providers[kind]?.provider;
    const fallback = typeof chosen === 'string' ? env[VENDOR_KEY_VARIABLES[chosen] ?? ''] : undefined;
    if (fallback?.trim() && providers[kind]!.apiKey === undefined) providers[kind]!.apiKey = fallback.trim();
  }

  const flagged = SETTINGS.filter((s) => s.flag);
  // A switch standing alone (at the end, or before another flag) means yes.
  const switches = new Set(flagged.filter((s) => s.switch).map((s) => `--${s.flag}`));
  const args = argv.map((arg, i) => (switches.has(arg) && (i === argv.length - 1 || argv[i + 1]!.startsWith('--')) ? `${arg}=yes` : arg));
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        serve: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        ...Object.fromEntries(flagged.map((s) => [s.flag!, { type: 'string' as const }])),
      },
    });
  } catch (error) {
    throw new ConfigError(`${describeArgsError(error)}\n\n${USAGE}`);
  }
  for (const s of flagged) {
    const value = parsed.values[s.flag!];
    if (typeof value === 'string') {
      if (value === '' || value.startsWith('--')) throw new ConfigError(`--${s.flag} needs a value`);
      setPath(config, s.path, readValue(s, value));
    }
  }
  return { serve: parsed.values.serve === true, help: parsed.values.help === true, config: config as ConfigInput };
}

/** parseArgs's messages, in the words the command has always used. */
function describeArgsError(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  const option = /'(-{1,2}[^' ]+)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option) return `unknown option ${option}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option) return `${option} needs a value`;
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return `unexpected argument: ${message.replace(/^.*'([^']*)'.*$/s, '$1')}`;
  return message;
}
