// Who is signed in. The desktop app signs in to its local account without a prompt; a browser
// signs in with email and password, and every tab of it then stays signed in through the
// server's HttpOnly refresh cookie (the access token itself lives only in each page's memory).
import { clearCookie, currentEmail, currentToken, forgetSignIn, onUnauthorized, rememberSignIn, restoreFromCookie } from './api.ts';
import { desktop } from './desktop.ts';

export const account = $state({ signedIn: currentToken() !== null, email: currentEmail() ?? '', desktop: desktop !== null });

export function signedIn(token: string, email: string): void {
  rememberSignIn(token, email);
  account.signedIn = true;
  account.email = email;
}

/**
 * Signs this browser out, every tab at once: the server refuses every token issued before now
 * (so a tab that missed the news gets 401 on its next request and shows sign-in), the refresh
 * cookie goes, and the other tabs are told.
 */
export async function signOut(): Promise<void> {
  await clearCookie();
  forgetSignIn();
  account.signedIn = false;
  account.email = '';
  signOuts?.postMessage('signed-out');
}

/** Tabs of this studio tell each other they signed out (no secret goes over it). */
const signOuts = typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel('voxflow.sign-out');
if (signOuts) {
  signOuts.onmessage = (event: MessageEvent) => {
    if (event.data !== 'signed-out' || !account.signedIn) return;
    forgetSignIn();
    account.signedIn = false;
    account.email = '';
  };
}

/** In the desktop app: a token for the local account, asked of the main process. */
export async function desktopSignIn(): Promise<boolean> {
  if (!desktop) return false;
  try {
    const { access_token, email } = await desktop.localSignIn();
    signedIn(access_token, email);
    return true;
  } catch {
    return false;
  }
}

/** At start, or when a token expires: the desktop's local account, else this browser's cookie. */
export async function restoreSignIn(): Promise<boolean> {
  if (desktop) return desktopSignIn();
  const restored = await restoreFromCookie();
  if (!restored) return false;
  signedIn(restored.token, restored.email);
  return true;
}

onUnauthorized(() => {
  // An expired token: the desktop or the refresh cookie quietly gives a new one; else sign in again.
  void restoreSignIn().then((ok) => {
    if (!ok) {
      forgetSignIn();
      account.signedIn = false;
      account.email = '';
    }
  });
});
