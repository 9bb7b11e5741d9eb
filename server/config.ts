// The one place that reads process.env and the command line. Everything else receives a Config.
import { resolve } from 'node:path';
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

/**
 * Time a provider may take to answer (per attempt, and between streamed chunks); each vendor's
 * own default when unset. Tests shorten it so a hung provider fails in milliseconds.
 */
const timeoutMs = positiveInt.optional();

export const DEFAULT_ASSISTANT_PROMPT =
  'You are a friendly, helpful voice assistant. Everything you say is spoken aloud: answer in one to three short sentences of plain words, with no lists, markdown or emoji.';

export const ConfigSchema = z.object({
  host: z.string().min(1).default('127.0.0.1'),
  port: port.default(8787),
  dataDir: z.string().min(1).default('./data'),
  /** Base of the URLs handed to clients (`ws_url`); derived from host and port when unset. */
  publicUrl: url.optional(),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Key for provider secrets at rest (base64, 32 bytes); generated in the data dir when unset. */
  secretKey: optionalText,
  limits: z
    .object({
      bodyBytes: positiveInt.default(512 * 1024),
      requestTimeoutMs: positiveInt.default(30_000),
      /** Password hashes computed at once; the rest wait in line so logins cannot starve audio. */
      concurrentPasswordHashes: positiveInt.default(1),
      /** Hashes that may wait; past that, logins get 503 at once instead of queueing forever. */
      queuedPasswordHashes: positiveInt.default(64),
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
  /** scrypt cost; N = 2^17 per DESIGN §3. Tests lower it, never production. */
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

export type Config = z.infer<typeof ConfigSchema> & { publicUrl: string; dataDir: string };
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
  const shownHost = c.host === '0.0.0.0' || c.host === '::' ? '127.0.0.1' : c.host;
  return {
    ...c,
    dataDir: resolve(c.dataDir),
    publicUrl: (c.publicUrl ?? `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${c.port}`).replace(/\/+$/, ''),
  };
}

export interface CliOptions {
  serve: boolean;
  help: boolean;
  config: ConfigInput;
}

const FLAGS: Record<string, { env: string; key: 'host' | 'port' | 'dataDir' | 'publicUrl' | 'logLevel' }> = {
  '--host': { env: 'VOXFLOW_HOST', key: 'host' },
  '--port': { env: 'VOXFLOW_PORT', key: 'port' },
  '--data-dir': { env: 'VOXFLOW_DATA_DIR', key: 'dataDir' },
  '--public-url': { env: 'VOXFLOW_PUBLIC_URL', key: 'publicUrl' },
  '--log-level': { env: 'VOXFLOW_LOG_LEVEL', key: 'logLevel' },
};

export const USAGE = `Usage: voxflow --serve [options]

Runs the Voxflow server headless: the hosted API and the voice engine router.

Options (each also read from the environment variable shown):
  --host <addr>        address to listen on             VOXFLOW_HOST        (default 127.0.0.1)
  --port <n>           port to listen on, 0 for any     VOXFLOW_PORT        (default 8787)
  --data-dir <path>    database, keys and secrets       VOXFLOW_DATA_DIR    (default ./data)
  --public-url <url>   base URL clients reach us at     VOXFLOW_PUBLIC_URL  (default http://host:port)
  --log-level <level>  fatal|error|warn|info|debug      VOXFLOW_LOG_LEVEL   (default info)
Other environment:
  VOXFLOW_SECRET_KEY   base64 32-byte key for provider secrets at rest (default: generated in the data dir)
  VOXFLOW_STT_PROVIDER none|deepgram|openai   (+ VOXFLOW_STT_API_KEY, _BASE_URL, _MODEL)
  VOXFLOW_LLM_PROVIDER none|openai            (+ VOXFLOW_LLM_API_KEY, _BASE_URL, _MODEL)
  VOXFLOW_TTS_PROVIDER flite|openai|deepgram  (+ VOXFLOW_TTS_API_KEY, _BASE_URL, _MODEL, VOXFLOW_TTS_VOICE)
  OPENAI_API_KEY, DEEPGRAM_API_KEY            used for that vendor when its VOXFLOW_*_API_KEY is unset
  VOXFLOW_ASSISTANT_PROMPT, VOXFLOW_LANGUAGE (default en), VOXFLOW_MAX_SESSIONS (default 100)
  VOXFLOW_STUN_URLS, VOXFLOW_TURN_URLS  comma-separated ICE server URLs for WebRTC
  VOXFLOW_TURN_SECRET  TURN REST shared secret; VOXFLOW_ICE_TTL_SECONDS credential lifetime (3600)
  VOXFLOW_MAX_PEER_CONNECTIONS  WebRTC connections at once (default 50)
`;

/**
 * Provider settings from the environment: VOXFLOW_<KIND>_PROVIDER, _API_KEY, _BASE_URL, _MODEL
 * (and VOXFLOW_TTS_VOICE). A vendor's usual variable (OPENAI_API_KEY, DEEPGRAM_API_KEY) fills in
 * a missing key for that vendor.
 */
function providersFromEnv(env: NodeJS.ProcessEnv): Record<string, Record<string, string>> {
  const vendorKeys: Record<string, string | undefined> = { openai: env.OPENAI_API_KEY, deepgram: env.DEEPGRAM_API_KEY };
  const out: Record<string, Record<string, string>> = {};
  for (const kind of ['stt', 'llm', 'tts'] as const) {
    const prefix = `VOXFLOW_${kind.toUpperCase()}_`;
    const entry: Record<string, string> = {};
    const set = (key: string, value: string | undefined) => {
      if (value !== undefined && value.trim() !== '') entry[key] = value.trim();
    };
    set('provider', env[`${prefix}PROVIDER`]);
    set('apiKey', env[`${prefix}API_KEY`] ?? (entry.provider ? vendorKeys[entry.provider] : undefined));
    set('baseUrl', env[`${prefix}BASE_URL`]);
    set('model', env[`${prefix}MODEL`]);
    if (kind === 'tts') set('voice', env.VOXFLOW_TTS_VOICE);
    out[kind] = entry;
  }
  return out;
}

/** Reads flags and env; flags win over env. Throws ConfigError on an unknown flag or bad value. */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): CliOptions {
  const config: Record<string, unknown> = {};
  for (const { env: name, key } of Object.values(FLAGS)) {
    if (env[name] !== undefined && env[name] !== '') config[key] = env[name];
  }
  if (env.VOXFLOW_SECRET_KEY) config.secretKey = env.VOXFLOW_SECRET_KEY;
  config.providers = providersFromEnv(env);
  const engine: Record<string, string> = {};
  if (env.VOXFLOW_ASSISTANT_PROMPT) engine.assistantPrompt = env.VOXFLOW_ASSISTANT_PROMPT;
  if (env.VOXFLOW_LANGUAGE) engine.language = env.VOXFLOW_LANGUAGE;
  if (env.VOXFLOW_MAX_SESSIONS) engine.maxSessions = env.VOXFLOW_MAX_SESSIONS;
  if (env.VOXFLOW_MAX_PEER_CONNECTIONS) engine.maxPeerConnections = env.VOXFLOW_MAX_PEER_CONNECTIONS;
  config.engine = engine;
  const list = (value: string | undefined) => (value ?? '').split(',').map((v) => v.trim()).filter(Boolean);
  config.ice = {
    stunUrls: list(env.VOXFLOW_STUN_URLS),
    turnUrls: list(env.VOXFLOW_TURN_URLS),
    ...(env.VOXFLOW_TURN_SECRET ? { turnSecret: env.VOXFLOW_TURN_SECRET } : {}),
    ...(env.VOXFLOW_ICE_TTL_SECONDS ? { ttlSeconds: env.VOXFLOW_ICE_TTL_SECONDS } : {}),
  };

  let serve = false;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--serve') serve = true;
    else if (arg === '--help' || arg === '-h') help = true;
    else {
      const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
      const spec = FLAGS[flag];
      if (!spec) throw new ConfigError(`unknown option ${flag}\n\n${USAGE}`);
      const value = inline ?? argv[++i];
      if (value === undefined || value.startsWith('--')) throw new ConfigError(`${flag} needs a value`);
      config[spec.key] = value;
    }
  }
  return { serve, help, config: config as ConfigInput };
}
