// The provider-keys section's model: which vendors an account may pick per kind (mirrored from
// server/providers/account-providers.ts VENDORS, which the studio cannot import because that
// folder is Node-side; a unit test keeps the two equal), and what the masked view means for
// what a minute costs. Pure, no DOM.
import type { ProviderKind, ProvidersView } from '../../lib/api-types.ts';

export const PROVIDER_KINDS: readonly ProviderKind[] = ['stt', 'llm', 'tts'];

export const PROVIDER_VENDORS: Record<ProviderKind, readonly string[]> = {
  stt: ['deepgram', 'openai'],
  llm: ['openai'],
  tts: ['openai', 'deepgram', 'flite'],
};

/** The vendor the server assumes for an account's own key when nothing else is chosen. */
const DEFAULT_VENDOR: Record<ProviderKind, string> = { stt: 'deepgram', llm: 'openai', tts: 'openai' };

/** Vendors that run inside the server: no key to set. */
export const EMBEDDED_VENDORS: ReadonlySet<string> = new Set(['flite']);

export const KIND_TITLES: Record<ProviderKind, string> = { stt: 'Speech to text', llm: 'Language model', tts: 'Text to speech' };

const VENDOR_LABELS: Record<string, string> = { deepgram: 'Deepgram', openai: 'OpenAI or compatible', flite: 'Flite (built in)', none: 'None' };

export function vendorLabel(vendor: string): string {
  return VENDOR_LABELS[vendor] ?? vendor;
}

/** The vendor the form starts on: the one in use when the account may pick it, else the default. */
export function initialVendor(view: ProvidersView, kind: ProviderKind): string {
  const current = view[`${kind}_provider`];
  return current !== null && PROVIDER_VENDORS[kind].includes(current) ? current : DEFAULT_VENDOR[kind];
}

export type KeyState =
  | { kind: 'own'; masked: string }
  | { kind: 'embedded' }
  | { kind: 'server' }
  | { kind: 'unavailable' };

/** Whose key serves a part now, which says whether it is charged (DESIGN §3). */
export function keyState(view: ProvidersView, kind: ProviderKind): KeyState {
  const masked = view[`${kind}_api_key`];
  const vendor = view[`${kind}_provider`];
  if (vendor !== null && EMBEDDED_VENDORS.has(vendor)) return { kind: 'embedded' };
  if (masked !== null) return { kind: 'own', masked };
  if (vendor === null || vendor === 'none') return { kind: 'unavailable' };
  return { kind: 'server' };
}

export function describeKeyState(state: KeyState): string {
  switch (state.kind) {
    case 'own':
      return 'Your key · not charged to credits';
    case 'embedded':
      return 'Built into the server · free, no key needed';
    case 'server':
      return "The server's key · 1¢ a minute from credits";
    case 'unavailable':
      return 'Not available on this server until you add a key';
  }
}
