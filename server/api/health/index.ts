// GET /health answers both of the spec's health tables in one body (DESIGN §4): the hosted
// API's status and service, and the engine router's provider report.
import type { FastifyInstance } from 'fastify';

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  const { config } = app.services;
  app.get('/health', { config: { auth: 'none' } }, async () => {
    const { stt, llm, tts } = config.providers;
    const configured = (p: { provider: string; apiKey?: string | undefined; baseUrl?: string | undefined }) =>
      p.provider !== 'none' && (p.provider === 'flite' || Boolean(p.apiKey) || Boolean(p.baseUrl));
    return {
      status: 'ok',
      service: 'voxflow',
      transport: 'websocket',
      stt_provider: stt.provider,
      stt_configured: configured(stt),
      tts_provider: tts.provider,
      tts_configured: configured(tts),
      llm_provider: llm.provider,
      llm_configured: configured(llm),
      turn_provider: 'silero',
      turn_configured: false,
      system_prompt_configured: false,
    };
  });
}
