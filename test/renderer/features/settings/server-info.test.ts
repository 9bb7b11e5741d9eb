import { describe, expect, it } from 'vitest';
import { SERVER_FLAGS, SERVER_ENV, capabilityRows, commandForThisAddress, serverUrls } from '../../../../renderer/src/features/settings/server-info.ts';
import { USAGE } from '../../../../server/config.ts';

describe('how the settings screen says to run the server headless', () => {
  it('lists each flag with the environment variable and default the server itself documents', () => {
    for (const flag of SERVER_FLAGS) {
      const line = USAGE.split('\n').find((l) => l.trimStart().startsWith(flag.flag + ' '));
      expect(line, flag.flag).toBeDefined();
      expect(line).toContain(flag.env);
      if (!flag.defaultValue.includes('<')) expect(line).toContain(`(default ${flag.defaultValue})`);
    }
    for (const env of SERVER_ENV) expect(USAGE).toContain(env.name);
  });

  it('derives every client URL from the origin, with ws:// or wss:// to match', () => {
    expect(serverUrls('http://127.0.0.1:8787/')).toMatchObject({
      origin: 'http://127.0.0.1:8787',
      offer: 'http://127.0.0.1:8787/offer',
      engineWs: 'ws://127.0.0.1:8787/ws?mode=flow&program_id=<flow id>',
      sessionWs: 'ws://127.0.0.1:8787/v1/ws/<session_token>',
      testPage: 'http://127.0.0.1:8787/test',
    });
    expect(serverUrls('https://voice.example.com').sessionWs).toBe('wss://voice.example.com/v1/ws/<session_token>');
  });

  it('gives the command that serves on this address', () => {
    expect(commandForThisAddress('http://127.0.0.1:41234')).toBe('npm run serve -- --host 127.0.0.1 --port 41234');
    expect(commandForThisAddress('http://192.168.1.20:8787')).toBe('npm run serve -- --host 0.0.0.0 --port 8787 --public-url http://192.168.1.20:8787');
    expect(commandForThisAddress('https://voice.example.com')).toBe('npm run serve -- --host 0.0.0.0 --port 8787 --public-url https://voice.example.com');
  });

  it('reads GET /capabilities into rows, saying so when a part is missing', () => {
    const rows = capabilityRows({ stt: { provider: 'none' }, tts: { provider: 'flite' }, llm: { provider: 'openai', model: 'gpt-4o-mini' }, transport: { webrtc: true, websocket: true } });
    expect(rows).toEqual([
      { label: 'Speech to text', value: 'none configured' },
      { label: 'Language model', value: 'openai (gpt-4o-mini)' },
      { label: 'Text to speech', value: 'flite' },
      { label: 'Turn detection', value: 'not reported' },
      { label: 'Transports', value: 'WebRTC, WebSocket' },
    ]);
    expect(capabilityRows(null).every((r) => r.value === 'not reported')).toBe(true);
  });
});
