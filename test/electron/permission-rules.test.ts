// What the studio may use of the machine: the microphone and clipboard writes, from its own
// origin, and nothing else.
import { describe, expect, it } from 'vitest';
import { isPermissionCheckAllowed, isPermissionRequestAllowed } from '../../electron/permissions.ts';

const APP = 'http://127.0.0.1:43125';

describe('permission requests', () => {
  it('grants the microphone to the studio', () => {
    expect(isPermissionRequestAllowed({ permission: 'media', requestingUrl: `${APP}/flow-editor`, mediaTypes: ['audio'] }, APP)).toBe(true);
  });

  it('refuses the camera, alone or with the microphone, and a media request that names nothing', () => {
    expect(isPermissionRequestAllowed({ permission: 'media', requestingUrl: `${APP}/`, mediaTypes: ['video'] }, APP)).toBe(false);
    expect(isPermissionRequestAllowed({ permission: 'media', requestingUrl: `${APP}/`, mediaTypes: ['audio', 'video'] }, APP)).toBe(false);
    expect(isPermissionRequestAllowed({ permission: 'media', requestingUrl: `${APP}/`, mediaTypes: [] }, APP)).toBe(false);
    expect(isPermissionRequestAllowed({ permission: 'media', requestingUrl: `${APP}/` }, APP)).toBe(false);
  });

  it('refuses the microphone to any other origin', () => {
    for (const requestingUrl of ['https://example.com/', 'http://127.0.0.1:8787/', 'file:///tmp/page.html', undefined]) {
      expect(isPermissionRequestAllowed({ permission: 'media', requestingUrl, mediaTypes: ['audio'] }, APP), String(requestingUrl)).toBe(false);
    }
  });

  it('lets the studio\'s Copy buttons write to the clipboard, and no other origin', () => {
    expect(isPermissionRequestAllowed({ permission: 'clipboard-sanitized-write', requestingUrl: `${APP}/settings` }, APP)).toBe(true);
    expect(isPermissionRequestAllowed({ permission: 'clipboard-sanitized-write', requestingUrl: 'https://example.com/' }, APP)).toBe(false);
  });

  it('refuses everything else, even to the studio', () => {
    for (const permission of ['geolocation', 'notifications', 'display-capture', 'clipboard-read', 'midiSysex', 'hid', 'usb', 'serial', 'openExternal', 'fullscreen', 'pointerLock', 'unknown']) {
      expect(isPermissionRequestAllowed({ permission, requestingUrl: `${APP}/`, mediaTypes: ['audio'] }, APP), permission).toBe(false);
    }
  });
});

describe('permission checks', () => {
  it('answers yes only for the studio\'s microphone, matching what a request would get', () => {
    expect(isPermissionCheckAllowed({ permission: 'media', requestingOrigin: APP, mediaType: 'audio' }, APP)).toBe(true);
    expect(isPermissionCheckAllowed({ permission: 'media', requestingOrigin: APP, mediaType: 'video' }, APP)).toBe(false);
    expect(isPermissionCheckAllowed({ permission: 'media', requestingOrigin: APP, mediaType: 'unknown' }, APP)).toBe(false);
    expect(isPermissionCheckAllowed({ permission: 'media', requestingOrigin: 'https://example.com', mediaType: 'audio' }, APP)).toBe(false);
    expect(isPermissionCheckAllowed({ permission: 'notifications', requestingOrigin: APP }, APP)).toBe(false);
    expect(isPermissionCheckAllowed({ permission: 'geolocation', requestingOrigin: APP }, APP)).toBe(false);
    expect(isPermissionCheckAllowed({ permission: 'clipboard-sanitized-write', requestingOrigin: APP }, APP)).toBe(true);
    expect(isPermissionCheckAllowed({ permission: 'clipboard-read', requestingOrigin: APP }, APP)).toBe(false);
  });
});
