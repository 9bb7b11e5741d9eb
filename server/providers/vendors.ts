// Every hosted vendor the server talks to, once: for each kind it serves, how its provider is made
// from a connection, and how an account's key for it is checked. The engine (an account's
// providers), the flow-test runner (the CLI's configured ones) and the key check on saving a key
// all go through this table; catalog.ts stays the pure list of names and defaults the studio
// bundles, and a vendor it names for the server with no entry here does not compile.
//
// Vendor modules are imported on first use: the SDKs take about a second to load, which a server
// or a scripted CI run that does not use them should not pay. The embedded voice (flite) is not
// here: it needs no key and no connection, and its owner decides whether it is shared.
import type { ProviderKind, ServerVendor } from './catalog.ts';
import type { LanguageModel, SpeechToText, TextToSpeech } from './types.ts';

/** Where a provider connects and with what: the server's settings, or an account's own key. */
export interface VendorConnection {
  apiKey: string | undefined;
  /** An OpenAI- or Deepgram-compatible server of one's own; the vendor's by default. */
  baseUrl: string | undefined;
  model: string | undefined;
  timeoutMs: number | undefined;
  /** The text-to-speech voice, for vendors that take one by name. */
  voice?: string | undefined;
}

interface ProviderOf {
  stt: SpeechToText;
  llm: LanguageModel;
  tts: TextToSpeech;
}

interface Factory<K extends ProviderKind> {
  /** Loads the vendor's module (its SDK), so the first session does not wait for it. */
  load(): Promise<unknown>;
  create(connection: VendorConnection): Promise<ProviderOf[K]>;
}

type Hosted<K extends ProviderKind> = Exclude<ServerVendor<K>, 'none' | 'flite'>;

const FACTORIES: { [K in ProviderKind]: Record<Hosted<K>, Factory<K>> } = {
  stt: {
    deepgram: {
      load: () => import('./stt/deepgram.ts'),
      create: async (c) => (await import('./stt/deepgram.ts')).createDeepgramSpeechToText({ apiKey: c.apiKey ?? '', baseUrl: c.baseUrl, model: c.model, timeoutMs: c.timeoutMs }),
    },
    openai: {
      load: () => import('./stt/openai.ts'),
      create: async (c) => (await import('./stt/openai.ts')).createOpenAISpeechToText({ apiKey: c.apiKey, baseUrl: c.baseUrl, model: c.model, timeoutMs: c.timeoutMs }),
    },
  },
  llm: {
    openai: {
      load: () => import('./llm/openai.ts'),
      create: async (c) => (await import('./llm/openai.ts')).createOpenAILanguageModel({ apiKey: c.apiKey, baseUrl: c.baseUrl, model: c.model, timeoutMs: c.timeoutMs }),
    },
  },
  tts: {
    openai: {
      load: () => import('./tts/openai.ts'),
      create: async (c) => (await import('./tts/openai.ts')).createOpenAITextToSpeech({ apiKey: c.apiKey, baseUrl: c.baseUrl, model: c.model, voice: c.voice, timeoutMs: c.timeoutMs }),
    },
    deepgram: {
      load: () => import('./tts/deepgram.ts'),
      create: async (c) => (await import('./tts/deepgram.ts')).createDeepgramTextToSpeech({ apiKey: c.apiKey ?? '', baseUrl: c.baseUrl, model: c.model, timeoutMs: c.timeoutMs }),
    },
  },
};

function factory<K extends ProviderKind>(kind: K, vendor: string): Factory<K> | undefined {
  const byVendor: Record<string, Factory<K>> = FACTORIES[kind];
  return Object.hasOwn(byVendor, vendor) ? byVendor[vendor] : undefined;
}

/** The hosted vendor's provider for `kind`; null for `none`, the embedded voice or an unknown name. */
export async function createHostedProvider<K extends ProviderKind>(kind: K, vendor: string, connection: VendorConnection): Promise<ProviderOf[K] | null> {
  const found = factory(kind, vendor);
  return found ? found.create(connection) : null;
}

/** Loads a hosted vendor's module ahead of its first use; nothing for the others. */
export async function loadHostedVendor(kind: ProviderKind, vendor: string): Promise<void> {
  await factory(kind, vendor)?.load();
}

// A cheap request that tells whether an account's own key works where it is sent, made when the
// key is saved: OpenAI-compatible servers list their models (GET …/models), Deepgram its projects
// (GET /v1/projects). Neither costs anything. Redirects are not followed.
export type KeyCheck = { ok: true } | { ok: false; rejected: boolean; message: string };

interface KeyCheckRequest {
  defaultBase: string;
  path: string;
  authorization(apiKey: string): string;
}

const OPENAI_COMPATIBLE: KeyCheckRequest = { defaultBase: 'https://api.openai.com/v1', path: '/models', authorization: (key) => `Bearer ${key}` };

const KEY_CHECKS: Record<string, KeyCheckRequest> = {
  openai: OPENAI_COMPATIBLE,
  deepgram: { defaultBase: 'https://api.deepgram.com', path: '/v1/projects', authorization: (key) => `Token ${key}` },
};

export async function checkProviderKey(vendor: string, apiKey: string, baseUrl: string | null, timeoutMs = 5_000): Promise<KeyCheck> {
  // Any other vendor is checked as an OpenAI-compatible server, and only at a base URL it was given.
  const request = Object.hasOwn(KEY_CHECKS, vendor) ? KEY_CHECKS[vendor]! : { ...OPENAI_COMPATIBLE, defaultBase: '' };
  const base = (baseUrl ?? request.defaultBase).replace(/\/+$/, '');
  if (!base) return { ok: true };
  const url = `${base}${request.path}`;
  try {
    const response = await fetch(url, { headers: { authorization: request.authorization(apiKey) }, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    if (response.status === 401 || response.status === 403) {
      return { ok: false, rejected: true, message: `${vendor} refused this key (${response.status} from ${new URL(url).host})` };
    }
    if (!response.ok) return { ok: false, rejected: false, message: `${new URL(url).host} answered ${response.status} when the key was checked` };
    return { ok: true };
  } catch (error) {
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : (error as Error).message;
    return { ok: false, rejected: false, message: `${new URL(url).host} could not be reached to check the key: ${reason}` };
  }
}
