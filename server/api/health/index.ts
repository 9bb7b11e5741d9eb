// GET /health answers both of the spec's health tables in one body (docs/hosting.md#monitoring): the hosted
// API's status and service, and the engine router's provider report. GET /capabilities says
// which providers and transports this server offers. Both are open: no credential needed.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { Capabilities, Health } from '../../protocol/api/engine-router.ts';
import { recordingsDir } from '../../outcomes/retention.ts';
import { EMBEDDED_VENDORS, TURN_PROVIDER, defaultModel } from '../../providers/catalog.ts';
import { DiskSpaceWatch } from './disk-space.ts';

interface ProviderConfig {
  provider: string;
  apiKey?: string | undefined;
  baseUrl?: string | undefined;
}

/** A provider counts as configured when it can be used: embedded, or with a key or an endpoint. */
function isConfigured(p: ProviderConfig): boolean {
  return p.provider !== 'none' && (EMBEDDED_VENDORS.has(p.provider) || Boolean(p.apiKey) || Boolean(p.baseUrl));
}

export async function healthRoutes(server: FastifyInstance): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { config, engine } = app.services;
  const { stt, llm, tts } = config.providers;
  // Known once every route is registered; not looked up on each request.
  let webrtc = false;
  // Free space is measured on a timer (disk-space.ts); a request only reads the last sample.
  const disk = new DiskSpaceWatch(
    [
      { name: 'data folder', path: config.dataDir },
      { name: 'recordings folder', path: recordingsDir(config.dataDir) },
    ],
    config.minFreeDiskMb * 1024 * 1024,
    app.log,
  );
  app.addHook('onReady', async () => {
    webrtc = app.hasRoute({ method: 'POST', url: '/offer' });
    disk.start();
  });
  app.addHook('onClose', () => disk.stop());

  // A store that refuses writes (a full disk, a failed journal), or a disk nearly full, makes the
  // node unhealthy: 503, so a load balancer stops sending it calls that would fail.
  // Never rate limited: polled from the addresses of the traffic it fronts (http/rate-limits.ts).
  app.get('/health', { config: { auth: 'none', rateLimited: false }, schema: { response: { 200: Health, 503: Health.describe('The store refuses writes, or a disk is nearly full') } } }, async (_request, reply) => {
    const storeWritable = app.services.store.writable();
    const problems = [...(storeWritable ? [] : ['the store refuses writes']), ...disk.problems()];
    if (problems.length > 0) void reply.status(503);
    return {
      status: problems.length === 0 ? ('ok' as const) : ('degraded' as const),
      store_writable: storeWritable,
      service: 'voxflow',
      transport: webrtc ? 'webrtc+websocket' : 'websocket',
      stt_provider: stt.provider,
      stt_configured: isConfigured(stt),
      tts_provider: tts.provider,
      tts_configured: isConfigured(tts),
      llm_provider: llm.provider,
      llm_configured: isConfigured(llm),
      turn_provider: TURN_PROVIDER,
      turn_configured: engine.hearsVoice,
      system_prompt_configured: config.engine.assistantPrompt.trim().length > 0,
      disk_free_bytes: disk.freeBytes(),
      problems,
      ...(app.services.sipRegistration ? { sip_registration: app.services.sipRegistration() } : {}),
    };
  });

  app.get('/capabilities', { config: { auth: 'none' }, schema: { response: { 200: Capabilities } } }, async () => ({
    stt: { provider: stt.provider },
    tts: { provider: tts.provider },
    llm: { provider: llm.provider, model: llm.provider === 'none' ? null : (llm.model ?? defaultModel('llm', llm.provider)) },
    // `ready` turns true once the model has loaded, a moment after start-up.
    turn: { provider: engine.hearsVoice ? TURN_PROVIDER : 'none', ready: engine.voiceReady },
    transport: { webrtc, websocket: true },
  }));
}
