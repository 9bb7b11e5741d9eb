// Which vendor serves each part of a voice session for an account, with whose key, and so what
// the part costs (prices.ts). Pure: the account's sealed key is passed on, never opened here.
import type { Config } from '../config.ts';
import { DEFAULT_ACCOUNT_VENDOR, EMBEDDED_VENDORS, PROVIDER_KINDS, type ProviderKind } from '../providers/catalog.ts';
import type { ProviderSettings } from '../store/store.ts';
import { PART_PRICE_CENTS } from './prices.ts';

/** The sealing context binds an account's key to its account and kind (AES-GCM additional data). */
export function keyContext(accountId: string, kind: ProviderKind): string {
  return `provider-key:${accountId}:${kind}`;
}

export type KeySource = 'account' | 'server' | 'embedded' | 'none';

export interface ResolvedProvider {
  kind: ProviderKind;
  /** The vendor name, or 'none' when nothing can serve this part. */
  provider: string;
  keySource: KeySource;
  /** The account's sealed key, when keySource is 'account' (opened only by the engine). */
  sealedKey: string | null;
  /** With the account's key: its own endpoint and model, if it set them. */
  baseUrl: string | null;
  model: string | null;
  priceCents: number;
}

function accountChoice(settings: ProviderSettings, kind: ProviderKind): { provider: string | null; sealedKey: string | null; baseUrl: string | null; model: string | null } {
  switch (kind) {
    case 'stt':
      return { provider: settings.sttProvider, sealedKey: settings.sttKeyEnc, baseUrl: settings.sttBaseUrl ?? null, model: settings.sttModel ?? null };
    case 'llm':
      return { provider: settings.llmProvider, sealedKey: settings.llmKeyEnc, baseUrl: settings.llmBaseUrl ?? null, model: settings.llmModel ?? null };
    case 'tts':
      return { provider: settings.ttsProvider, sealedKey: settings.ttsKeyEnc, baseUrl: settings.ttsBaseUrl ?? null, model: settings.ttsModel ?? null };
  }
}

export function resolveProvider(config: Config, settings: ProviderSettings, kind: ProviderKind): ResolvedProvider {
  const server = config.providers[kind];
  const own = accountChoice(settings, kind);
  const provider = own.provider ?? (server.provider !== 'none' ? server.provider : own.sealedKey ? DEFAULT_ACCOUNT_VENDOR[kind] : 'none');
  let keySource: KeySource;
  if (provider === 'none') keySource = 'none';
  else if (EMBEDDED_VENDORS.has(provider)) keySource = 'embedded';
  else if (own.sealedKey) keySource = 'account';
  // The server's key only serves the vendor the server is configured for.
  else if (provider === server.provider) keySource = 'server';
  else keySource = 'none';
  return {
    kind,
    provider: keySource === 'none' ? 'none' : provider,
    keySource,
    sealedKey: keySource === 'account' ? own.sealedKey : null,
    baseUrl: keySource === 'account' ? own.baseUrl : null,
    model: keySource === 'account' ? own.model : null,
    priceCents: keySource === 'server' ? PART_PRICE_CENTS[kind] : 0,
  };
}

export function resolveProviders(config: Config, settings: ProviderSettings): Record<ProviderKind, ResolvedProvider> {
  return { stt: resolveProvider(config, settings, 'stt'), llm: resolveProvider(config, settings, 'llm'), tts: resolveProvider(config, settings, 'tts') };
}

/** What a minute of voice costs this account now, in cents. */
export function effectiveRatePerMinute(config: Config, settings: ProviderSettings): number {
  const resolved = resolveProviders(config, settings);
  return PROVIDER_KINDS.reduce((sum, kind) => sum + resolved[kind].priceCents, 0);
}
