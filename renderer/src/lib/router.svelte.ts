// A small history router: the studio has five screens and the server answers every one of their
// paths with the same page, so a reload or a shared link lands on the same screen.
export type Route =
  | { screen: 'sign-in' }
  | { screen: 'flows' }
  | { screen: 'editor'; flowId: string | null }
  | { screen: 'sessions' }
  | { screen: 'settings' };

export function parseRoute(location: { pathname: string; search: string }): Route {
  const path = location.pathname.replace(/\/+$/, '') || '/';
  const query = new URLSearchParams(location.search);
  switch (path) {
    case '/sign-in':
      return { screen: 'sign-in' };
    case '/flow-editor':
      return { screen: 'editor', flowId: query.get('flow') };
    case '/sessions':
      return { screen: 'sessions' };
    case '/settings':
      return { screen: 'settings' };
    default:
      return { screen: 'flows' };
  }
}

export function routeToPath(route: Route): string {
  switch (route.screen) {
    case 'sign-in':
      return '/sign-in';
    case 'flows':
      return '/';
    case 'editor':
      return route.flowId ? `/flow-editor?flow=${encodeURIComponent(route.flowId)}` : '/flow-editor';
    case 'sessions':
      return '/sessions';
    case 'settings':
      return '/settings';
  }
}

/** Screens may refuse to be left (unsaved changes); the guard returns false to stay. */
type LeaveGuard = () => boolean;
let leaveGuard: LeaveGuard | null = null;

export const router = $state({ route: parseRoute(window.location) as Route });

export function setLeaveGuard(guard: LeaveGuard | null): void {
  leaveGuard = guard;
}

export function navigate(route: Route, options: { replace?: boolean } = {}): boolean {
  if (leaveGuard && !leaveGuard()) return false;
  const path = routeToPath(route);
  if (options.replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  router.route = route;
  return true;
}

window.addEventListener('popstate', () => {
  const next = parseRoute(window.location);
  if (leaveGuard && !leaveGuard()) {
    // Put the address back: the screen stays.
    history.pushState(null, '', routeToPath(router.route));
    return;
  }
  router.route = next;
});
