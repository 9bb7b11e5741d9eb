// What the settings screen says about running this server headless: the commands, the flags
// and environment (mirrored from server/config.ts; a unit test compares them with its USAGE text
// so they cannot drift apart), and the URLs clients use, derived from the origin the studio was
// loaded from — which is the server's own address, in the browser and in the desktop app alike.

export interface ServerFlag {
  flag: string;
  env: string;
  defaultValue: string;
  meaning: string;
}

export const SERVER_FLAGS: readonly ServerFlag[] = [
  { flag: '--host', env: 'VOXFLOW_HOST', defaultValue: '127.0.0.1', meaning: 'address to listen on (0.0.0.0 for every interface)' },
  { flag: '--port', env: 'VOXFLOW_PORT', defaultValue: '8787', meaning: 'port to listen on; 0 picks a free one' },
  { flag: '--data-dir', env: 'VOXFLOW_DATA_DIR', defaultValue: './data', meaning: 'database, journal and keys' },
  { flag: '--public-url', env: 'VOXFLOW_PUBLIC_URL', defaultValue: 'http://<host>:<port>', meaning: 'base of the ws_url handed to clients; https:// gives wss://' },
  { flag: '--log-level', env: 'VOXFLOW_LOG_LEVEL', defaultValue: 'info', meaning: 'fatal, error, warn, info, debug, or silent' },
];

export interface ServerEnv {
  name: string;
  meaning: string;
}

export const SERVER_ENV: readonly ServerEnv[] = [
  { name: 'VOXFLOW_SECRET_KEY', meaning: 'base64 32-byte key for provider keys at rest (generated in the data dir when unset)' },
  { name: 'VOXFLOW_STT_PROVIDER', meaning: 'speech to text: none, deepgram or openai (+ _API_KEY, _BASE_URL, _MODEL)' },
  { name: 'VOXFLOW_LLM_PROVIDER', meaning: 'language model: none or openai, any OpenAI-compatible server (+ _API_KEY, _BASE_URL, _MODEL)' },
  { name: 'VOXFLOW_TTS_PROVIDER', meaning: 'text to speech: flite (built in), openai or deepgram (+ _API_KEY, _BASE_URL, _MODEL, VOXFLOW_TTS_VOICE)' },
  { name: 'OPENAI_API_KEY', meaning: 'used for OpenAI when its VOXFLOW_*_API_KEY is unset (DEEPGRAM_API_KEY likewise)' },
  { name: 'VOXFLOW_STUN_URLS', meaning: 'comma-separated STUN URLs for WebRTC (VOXFLOW_TURN_URLS and VOXFLOW_TURN_SECRET for TURN)' },
  { name: 'VOXFLOW_MAX_SESSIONS', meaning: 'live voice sessions at once (default 100)' },
];

export const INSTALL_AND_RUN = 'npm install && npm run serve';

/** Where a client reaches this server, derived from the origin the studio was loaded from. */
export interface ServerUrls {
  origin: string;
  offer: string;
  engineWs: string;
  sessionWs: string;
  iceServers: string;
  testPage: string;
  health: string;
}

export function serverUrls(origin: string): ServerUrls {
  const base = origin.replace(/\/+$/, '');
  const wsBase = base.replace(/^http(s?):/i, 'ws$1:');
  return {
    origin: base,
    offer: `${base}/offer`,
    engineWs: `${wsBase}/ws?mode=flow&program_id=<flow id>`,
    sessionWs: `${wsBase}/v1/ws/<session_token>`,
    iceServers: `${base}/ice-servers`,
    testPage: `${base}/test`,
    health: `${base}/health`,
  };
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * The command that serves on this server's address. A loopback address is served as it is; any
 * other is listened for on every interface with the address as the public URL, so the ws_url
 * handed to clients is one they can reach. (A TLS proxy in front has its own port: then the
 * port here is the proxy's, and the command shows the default one.)
 */
export function commandForThisAddress(origin: string): string {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return INSTALL_AND_RUN;
  }
  const secure = url.protocol === 'https:';
  const port = url.port || (secure ? '' : '80');
  const portFlag = secure ? '--port 8787' : `--port ${port}`;
  if (!secure && LOOPBACK.has(url.hostname)) return `npm run serve -- --host ${url.hostname} ${portFlag}`;
  return `npm run serve -- --host 0.0.0.0 ${portFlag} --public-url ${url.origin}`;
}

/** The hosting example: every flag, and the same through the environment. */
export const HOSTING_COMMAND = 'npm run serve -- --host 0.0.0.0 --port 8787 --data-dir /var/lib/voxflow --public-url https://voice.example.com';
export const HOSTING_ENV_COMMAND =
  'VOXFLOW_HOST=0.0.0.0 VOXFLOW_PORT=8787 VOXFLOW_DATA_DIR=/var/lib/voxflow VOXFLOW_PUBLIC_URL=https://voice.example.com npm run serve';

export interface CapabilityRow {
  label: string;
  value: string;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const field = (value: unknown, key: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined);

/** GET /capabilities as rows a person reads; unknown or missing parts read "not reported". */
export function capabilityRows(capabilities: unknown): CapabilityRow[] {
  const provider = (kind: string) => {
    const name = text(field(field(capabilities, kind), 'provider'));
    return name === null ? 'not reported' : name === 'none' ? 'none configured' : name;
  };
  const model = text(field(field(capabilities, 'llm'), 'model'));
  const transport = field(capabilities, 'transport');
  const transports = [field(transport, 'webrtc') === true ? 'WebRTC' : null, field(transport, 'websocket') === true ? 'WebSocket' : null].filter(Boolean);
  return [
    { label: 'Speech to text', value: provider('stt') },
    { label: 'Language model', value: model ? `${provider('llm')} (${model})` : provider('llm') },
    { label: 'Text to speech', value: provider('tts') },
    { label: 'Turn detection', value: provider('turn') },
    { label: 'Transports', value: transports.length > 0 ? transports.join(', ') : 'not reported' },
  ];
}
