// The screens a visit does not start on: loaded the first time they are opened, so the studio's
// first screen (the flows, sign-in, or the editor's own loader) starts without their code. The
// flows screen is where the studio opens and where every way back leads, so it stays in the
// entry with sign-in; these are the rest (sessions and a session's view with its player and the
// tests it saves, settings, phone numbers, experiments). Once loaded, a screen stays loaded.
import type { Route } from './lib/router.svelte.ts';

const importers = {
  sessions: () => import('./features/sessions/Sessions.svelte'),
  session: () => import('./features/sessions/SessionView.svelte'),
  settings: () => import('./features/settings/Settings.svelte'),
  'phone-numbers': () => import('./features/phone/PhoneNumbers.svelte'),
  experiments: () => import('./features/experiments/Experiments.svelte'),
} satisfies Partial<Record<Route['screen'], () => Promise<unknown>>>;

export type LazyScreen = keyof typeof importers;
/** Each screen's component, as its module exports it (so App.svelte's props are checked). */
type Loaded = { [S in LazyScreen]?: Awaited<ReturnType<(typeof importers)[S]>>['default'] };

export const screens = $state<{ loaded: Loaded; failed: Partial<Record<LazyScreen, string>> }>({ loaded: {}, failed: {} });

const loading = new Map<LazyScreen, Promise<void>>();

function isLazy(screen: Route['screen']): screen is LazyScreen {
  return Object.hasOwn(importers, screen);
}

/**
 * Loads `screen`'s code when it is one of the lazily loaded screens and not loaded yet; resolves
 * once it can be drawn (or has failed to load: a new build deployed under a running page, whose
 * old chunk names are gone), so a caller can move the focus into it. Others resolve at once.
 */
export function loadScreen(screen: Route['screen']): Promise<void> {
  if (!isLazy(screen) || screens.loaded[screen]) return Promise.resolve();
  let pending = loading.get(screen);
  if (!pending) {
    delete screens.failed[screen];
    pending = importers[screen]().then(
      (module) => {
        // Kept as it is: a component is a function, which a $state proxy would not wrap anyway.
        screens.loaded = { ...screens.loaded, [screen]: module.default };
      },
      (error: unknown) => {
        loading.delete(screen);
        screens.failed = { ...screens.failed, [screen]: error instanceof Error ? error.message : String(error) };
      },
    );
    loading.set(screen, pending);
  }
  return pending;
}
