// The provider-keys section's model: which vendors an account may pick per kind (the server's
// own catalog, server/providers/catalog.ts, which is pure data), and what the masked view means
// for what a minute costs. Pure, no DOM.
import { DEFAULT_ACCOUNT_VENDOR, EMBEDDED_VENDORS, PROVIDER_KINDS, VENDORS as PROVIDER_VENDORS } from '../../../../server/providers/catalog.ts';
import type { ProviderKind, ProvidersView } from '../../lib/api-types.ts';

export { EMBEDDED_VENDORS, PROVIDER_KINDS, PROVIDER_VENDORS };

export const KIND_TITLES: Record<ProviderKind, string> = { stt: 'Speech to text', llm: 'Language model', tts: 'Text to speech' };

const VENDOR_LABELS: Record<string, string> = { deepgram: 'Deepgram', openai: 'OpenAI or compatible', flite: 'Flite (built in)', none: 'None' };

export function vendorLabel(vendor: string): string {
  return VENDOR_LABELS[vendor] ?? vendor;
}

/** The vendor the form starts on: the one in use when the account may pick it, else the default. */
export function initialVendor(view: ProvidersView, kind: ProviderKind): string {
  const current = view[`${kind}_provider`];
  return current !== null && PROVIDER_VENDORS[kind].includes(current) ? current : DEFAULT_ACCOUNT_VENDOR[kind];
}

export type KeyState =
  | { kind: 'own'; masked: string }
  | { kind: 'embedded' }
  | { kind: 'server' }
  | { kind: 'unavailable' };

/** Whose key serves a part now, which says whether it is charged (docs/api.md). */
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
