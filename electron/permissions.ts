// Which browser permissions the studio gets, only for pages on the app's origin: the microphone,
// for test-talk, and writing text to the clipboard, for its Copy buttons (an API key is shown
// once). Camera, screen capture, reading the clipboard, location, notifications, devices and
// everything else are refused, as is any request from elsewhere. Pure, so the rules are tested
// without Electron; the session adapter feeds Electron's request and check handlers through these.
import { isAppUrl } from './navigation.ts';

/** Permissions granted to the studio as they are; 'media' is granted for the microphone alone. */
const GRANTED_TO_THE_STUDIO = new Set(['clipboard-sanitized-write']);

export interface PermissionRequestFacts {
  /** Electron's permission name ('media', 'geolocation', 'notifications', …). */
  permission: string;
  /** The URL (or origin) of the frame asking. */
  requestingUrl: string | undefined;
  /** For 'media' requests: what is asked for; the microphone alone is 'audio'. */
  mediaTypes?: readonly string[] | undefined;
}

/** A permission request (the prompt a browser would show): microphone-only media and clipboard writes, from the app. */
export function isPermissionRequestAllowed(request: PermissionRequestFacts, appOrigin: string): boolean {
  if (!request.requestingUrl || !isAppUrl(request.requestingUrl, appOrigin)) return false;
  if (GRANTED_TO_THE_STUDIO.has(request.permission)) return true;
  if (request.permission !== 'media') return false;
  const types = request.mediaTypes ?? [];
  // An empty list is not "nothing": Chromium sends it when it could not say, so it is refused.
  return types.length > 0 && types.every((type) => type === 'audio');
}

export interface PermissionCheckFacts {
  permission: string;
  /** The origin of the frame checking. */
  requestingOrigin: string;
  /** For 'media' checks: 'audio', 'video' or 'unknown'. */
  mediaType?: string | undefined;
}

/**
 * A permission check (navigator.permissions.query, device labels in enumerateDevices): answers
 * true only for what a request would be granted, so the page never believes it has more.
 */
export function isPermissionCheckAllowed(check: PermissionCheckFacts, appOrigin: string): boolean {
  if (!isAppUrl(check.requestingOrigin, appOrigin)) return false;
  if (GRANTED_TO_THE_STUDIO.has(check.permission)) return true;
  return check.permission === 'media' && check.mediaType === 'audio';
}
