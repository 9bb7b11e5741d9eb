// Wires the pure rules (csp.ts, permissions.ts, navigation.ts) into Electron: the session's
// response headers and permission handlers, and a guard on every web contents ever created, so
// a window opened later gets the same rules as the first.
import { app, shell, type BrowserWindowConstructorOptions, type Session } from 'electron';
import { withContentSecurityPolicy } from './csp.ts';
import { navigationDecision } from './navigation.ts';
import { isPermissionCheckAllowed, isPermissionRequestAllowed } from './permissions.ts';

export function secureSession(session: Session, appOrigin: string): void {
  session.webRequest.onHeadersReceived((details, callback) => {
    const responseHeaders = withContentSecurityPolicy(details.url, details.responseHeaders, appOrigin);
    callback(responseHeaders ? { responseHeaders } : {});
  });
  session.setPermissionRequestHandler((_contents, permission, callback, details) => {
    const mediaTypes = 'mediaTypes' in details ? details.mediaTypes : undefined;
    callback(isPermissionRequestAllowed({ permission, requestingUrl: details.requestingUrl, mediaTypes }, appOrigin));
  });
  session.setPermissionCheckHandler((_contents, permission, requestingOrigin, details) =>
    isPermissionCheckAllowed({ permission, requestingOrigin, mediaType: details.mediaType }, appOrigin),
  );
  // USB, HID, serial and Bluetooth devices: the studio uses none.
  session.setDevicePermissionHandler(() => false);
}

/**
 * Navigation stays on the app's origin; links elsewhere on the web open in the browser; new
 * windows on the app's origin get `childWindowOptions` (the same security settings); no
 * <webview> ever attaches.
 */
export function guardAllWebContents(appOrigin: string, childWindowOptions: BrowserWindowConstructorOptions): void {
  app.on('web-contents-created', (_event, contents) => {
    contents.on('will-navigate', (event) => {
      const decision = navigationDecision(event.url, appOrigin);
      if (decision === 'allow') return;
      event.preventDefault();
      if (decision === 'open-in-browser') void shell.openExternal(event.url);
    });
    // A redirect is not the user's choice: off the app's origin it simply stops.
    contents.on('will-redirect', (event) => {
      if (navigationDecision(event.url, appOrigin) !== 'allow') event.preventDefault();
    });
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      const decision = navigationDecision(url, appOrigin);
      if (decision === 'allow') return { action: 'allow', overrideBrowserWindowOptions: childWindowOptions };
      if (decision === 'open-in-browser') void shell.openExternal(url);
      return { action: 'deny' };
    });
  });
}
