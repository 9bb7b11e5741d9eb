// A flow's own voice (`settings.voice`, docs/flows.md): the session's speech goes through the
// configured vendor with the flow's voice name. The vendor itself is the account's or the
// server's choice: a flow naming another vendor keeps the configured voice (the studio says so),
// since a voice name means nothing to a vendor that does not have it.
import type { FlowDocument } from '../flow/types.ts';
import type { TextToSpeech } from '../providers/types.ts';

export function withFlowVoice(tts: TextToSpeech, flow: FlowDocument | null): TextToSpeech {
  const wanted = flow?.settings?.voice;
  if (!wanted?.voice) return tts;
  // Vendor names are matched as the studio's notice matches them: `Deepgram` is deepgram.
  if (wanted.provider !== undefined && wanted.provider.trim().toLowerCase() !== tts.provider.toLowerCase()) return tts;
  const voice = wanted.voice;
  return {
    provider: tts.provider,
    synthesize: (text, signal, hints) => tts.synthesize(text, signal, { aheadMs: hints?.aheadMs ?? 0, ...hints, voice }),
  };
}
