// ICE servers for browsers (GET /ice-servers) and for our own peer connections. TURN uses the
// TURN REST scheme (draft-uberti-behave-turn-rest, coturn's use-auth-secret): the username is
// `<expiry unix time>:<account>` and the credential base64(HMAC-SHA1(secret, username)), so the
// TURN server checks it with the shared secret alone and it expires by itself.
import { createHmac } from 'node:crypto';
import type { Config } from '../../config.ts';

export interface IceServer {
  urls: string;
  username?: string;
  credential?: string;
}

export interface IceConfiguration {
  iceServers: IceServer[];
  ttlSeconds: number;
}

export function turnCredentials(secret: string, accountId: string, ttlSeconds: number, nowSeconds = Math.floor(Date.now() / 1000)) {
  const username = `${nowSeconds + ttlSeconds}:${accountId}`;
  return { username, credential: createHmac('sha1', secret).update(username).digest('base64') };
}

export function iceConfiguration(config: Config['ice'], accountId: string, nowSeconds?: number): IceConfiguration {
  const servers: IceServer[] = config.stunUrls.map((urls) => ({ urls }));
  if (config.turnUrls.length > 0 && config.turnSecret) {
    const credentials = turnCredentials(config.turnSecret, accountId, config.ttlSeconds, nowSeconds);
    for (const urls of config.turnUrls) servers.push({ urls, ...credentials });
  }
  return { iceServers: servers, ttlSeconds: config.ttlSeconds };
}
