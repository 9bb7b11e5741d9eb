// POST /v1/voices/preview: a short line spoken by the voice this account's sessions use, in the
// voice named, as a WAV: the studio's voice picker plays it before the designer chooses. It costs
// no credits and is not a session; each account may ask for a few every few seconds, so it cannot
// keep the server's voice (or a hosted vendor on the server's key) busy.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { encodeWav } from '../../audio/pcm.ts';
import { AppError } from '../../errors.ts';
import { mediaBody } from '../../http/api-contract.ts';
import { RateLimiter } from '../../http/rate-limiter.ts';
import { accountOf } from '../../http/services.ts';

/** Per account: three in any ten seconds (a few voices tried in a row). */
const PER_WINDOW = 3;
const WINDOW_MS = 10_000;
/** A preview that takes longer than this is given up (a hosted vendor that hangs). */
const PREVIEW_TIMEOUT_MS = 30_000;
export const DEFAULT_PREVIEW_LINE = 'Hello! This is how I will sound on your calls.';

const PreviewBody = z.object({
  voice: z.string().trim().min(1, 'voice must not be empty').max(100, 'voice is at most 100 characters').nullish(),
  text: z.string().trim().min(1, 'text must not be empty').max(200, 'text is at most 200 characters').optional(),
});


export async function voiceRoutes(server: FastifyInstance): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const limiter = new RateLimiter(PER_WINDOW, WINDOW_MS);
  const responses = { 200: mediaBody('The line spoken, PCM16 mono WAV', ['audio/wav'], z.string().meta({ format: 'binary' })) };

  app.post('/v1/voices/preview', { config: { auth: 'jwt_or_api_key' }, schema: { body: PreviewBody, response: responses } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    // Counted first, before any work: a refusal costs nothing.
    const decision = limiter.take(accountId);
    if (!decision.allowed) {
      throw new AppError('rate_limited', `At most ${PER_WINDOW} voice previews in ${WINDOW_MS / 1000} s per account; wait a moment.`, undefined, { 'retry-after': String(decision.retryAfterSeconds) });
    }
    const signal = AbortSignal.timeout(PREVIEW_TIMEOUT_MS);
    const spoken = await app.services.previewVoice(accountId, request.body.voice ?? null, request.body.text ?? DEFAULT_PREVIEW_LINE, signal);
    return reply.header('content-type', 'audio/wav').header('cache-control', 'private, no-store').header('x-voice-provider', spoken.provider).send(Buffer.from(encodeWav(spoken.pcm, spoken.sampleRate)));
  });
}
