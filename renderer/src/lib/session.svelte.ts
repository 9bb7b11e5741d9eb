// Who is signed in. The desktop app signs in to its local account without a prompt; a browser
// signs in with email and password and keeps the token for the tab's life.
import { currentEmail, currentToken, forgetSignIn, onUnauthorized, rememberSignIn } from './api.ts';
import { desktop } from './desktop.ts';

export const account = $state({ signedIn: currentToken() !== null, email: currentEmail() ?? '', desktop: desktop !== null });

export function signedIn(token: string, email: string): void {
  rememberSignIn(token, email);
  account.signedIn = true;
  account.email = email;
}

export function signOut(): void {
  forgetSignIn();
  account.signedIn = false;
  account.email = '';
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

onUnauthorized(() => {
  // An expired token: the desktop quietly gets a new one; a browser asks again.
  void desktopSignIn().then((ok) => {
    if (!ok) signOut();
  });
});
