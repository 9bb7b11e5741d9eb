// A small history router: the studio has six screens and the server answers every one of their
// paths with the same page, so a reload or a shared link lands on the same screen.
export type Route =
  | { screen: 'sign-in' }
  | { screen: 'flows' }
  /**
   * `draft`: a flow not saved yet (features/flows/flow-drafts.ts); it keeps its id once saved.
   * `state`: the state to open the flow at, selected (a session's "open the flow at this state").
   */
  | { screen: 'editor'; flowId: string | null; draft?: string; state?: string }
  /** `query`: the list's search and filters as the address holds them (features/sessions/session-filters.ts). */
  | { screen: 'sessions'; query?: string }
  | { screen: 'session'; sessionId: string }
  | { screen: 'phone-numbers' }
  /** A flow's A/B experiments between its published versions. */
  | { screen: 'experiments'; flowId: string }
  /** `section`: the section to open at (its heading's id without `-title`, e.g. `secrets`). */
  | { screen: 'settings'; section?: string }
  /** An address the studio has no screen for (a mistyped or old link): kept as it was, so it can be corrected. */
  | { screen: 'not-found'; path: string };

// The flow last opened in the editor, so "Editor" (and /flow-editor) reopens it. Not a secret:
// an id, kept per browser.
const LAST_FLOW_KEY = 'voxflow.last_flow';

export function lastFlow(): string | null {
  try {
    return localStorage.getItem(LAST_FLOW_KEY);
  } catch {
    return null;
  }
}

function rememberFlow(route: Route): void {
  if (route.screen !== 'editor' || !route.flowId) return;
  try {
    localStorage.setItem(LAST_FLOW_KEY, route.flowId);
  } catch {
    // storage refused (private mode): the editor just won't remember
  }
}

/** An editor route without a flow opens the last one, if there is one. */
function withLastFlow(route: Route): Route {
  return route.screen === 'editor' && !route.flowId && !route.draft ? { screen: 'editor', flowId: lastFlow() } : route;
}

export function parseRoute(location: { pathname: string; search: string }): Route {
  const path = location.pathname.replace(/\/+$/, '') || '/';
  const query = new URLSearchParams(location.search);
  switch (path) {
    case '/sign-in':
      return { screen: 'sign-in' };
    case '/flow-editor': {
      const draft = query.get('draft');
      const state = query.get('flow') ? query.get('state') : null;
      return draft && !query.get('flow') ? { screen: 'editor', flowId: null, draft } : { screen: 'editor', flowId: query.get('flow'), ...(state ? { state } : {}) };
    }
    case '/sessions':
      return location.search.length > 1 ? { screen: 'sessions', query: location.search.slice(1) } : { screen: 'sessions' };
    case '/session':
      return query.get('id') ? { screen: 'session', sessionId: query.get('id')! } : { screen: 'sessions' };
    case '/phone-numbers':
      return { screen: 'phone-numbers' };
    case '/experiments':
      return query.get('flow') ? { screen: 'experiments', flowId: query.get('flow')! } : { screen: 'flows' };
    case '/settings': {
      const section = query.get('section');
      return section && /^[a-z-]{1,40}$/.test(section) ? { screen: 'settings', section } : { screen: 'settings' };
    }
    case '/':
      return { screen: 'flows' };
    default:
      return { screen: 'not-found', path: location.pathname + location.search };
  }
}

export function routeToPath(route: Route): string {
  switch (route.screen) {
    case 'sign-in':
      return '/sign-in';
    case 'flows':
      return '/';
    case 'editor':
      return route.flowId
        ? `/flow-editor?flow=${encodeURIComponent(route.flowId)}${route.state ? `&state=${encodeURIComponent(route.state)}` : ''}`
        : route.draft
          ? `/flow-editor?draft=${encodeURIComponent(route.draft)}`
          : '/flow-editor';
    case 'sessions':
      return route.query ? `/sessions?${route.query}` : '/sessions';
    case 'session':
      return `/session?id=${encodeURIComponent(route.sessionId)}`;
    case 'phone-numbers':
      return '/phone-numbers';
    case 'experiments':
      return `/experiments?flow=${encodeURIComponent(route.flowId)}`;
    case 'settings':
      return route.section ? `/settings?section=${encodeURIComponent(route.section)}` : '/settings';
    case 'not-found':
      return route.path;
  }
}

/** Screens may refuse to be left (unsaved changes); the guard returns false to stay. */
type LeaveGuard = () => boolean;
let leaveGuard: LeaveGuard | null = null;

const initial = withLastFlow(parseRoute(window.location));
if (initial.screen === 'editor' && initial.flowId && !new URLSearchParams(window.location.search).get('flow')) {
  history.replaceState(null, '', routeToPath(initial));
}
rememberFlow(initial);

export const router = $state({ route: initial });

export function setLeaveGuard(guard: LeaveGuard | null): void {
  leaveGuard = guard;
}

/**
 * Goes to `to`. `unguarded`: the screen itself changes its own address (a draft saved as a flow),
 * which is no leaving.
 */
export function navigate(to: Route, options: { replace?: boolean; unguarded?: boolean } = {}): boolean {
  if (!options.unguarded && leaveGuard && !leaveGuard()) return false;
  const route = withLastFlow(to);
  rememberFlow(route);
  const path = routeToPath(route);
  if (options.replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  router.route = route;
  return true;
}

window.addEventListener('popstate', () => {
  const next = withLastFlow(parseRoute(window.location));
  rememberFlow(next);
  if (leaveGuard && !leaveGuard()) {
    // Put the address back: the screen stays.
    history.pushState(null, '', routeToPath(router.route));
    return;
  }
  router.route = next;
});
