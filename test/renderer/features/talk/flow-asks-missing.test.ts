// What the flow panel says when a flow's settings ask for what this server lacks (docs/flows.md,
// the flow panel): from /capabilities and the account's own provider keys, in the server's terms.
import { describe, expect, it } from 'vitest';
import { missingForFlow } from '../../../../renderer/src/features/talk/talk-abilities.ts';

const NO_KEYS = { stt_provider: null, stt_api_key: null, llm_provider: null, llm_api_key: null, tts_provider: null, tts_api_key: null };
const server = (stt: string, llm: string, tts: string) => ({
  stt: { provider: stt },
  llm: { provider: llm, model: llm === 'none' ? null : 'gpt-4o-mini' },
  tts: { provider: tts },
  turn: { provider: 'silero', ready: true },
  transport: { webrtc: true, websocket: true },
});
const NOTHING = { llmModel: '', voiceProvider: '', sttModel: '', language: '' };

describe('what a flow asks of a server that lacks it', () => {
  it('says nothing for a flow that leaves everything to the server, even a bare one', () => {
    expect(missingForFlow(NOTHING, server('none', 'none', 'none'), NO_KEYS)).toEqual([]);
  });

  it('names a model with no language model, a voice provider the server does not speak with, and a speech model with no speech-to-text', () => {
    const said = missingForFlow({ llmModel: 'gpt-4o', voiceProvider: 'deepgram', sttModel: 'nova-2', language: '' }, server('none', 'none', 'flite'), NO_KEYS);
    expect(said).toEqual([
      'The flow asks for the model gpt-4o, but this server has no language model (llm: none): the agent cannot answer. Add a model key in Settings → Provider keys.',
      "The flow asks for a deepgram voice, but this server speaks with flite, and the flow's voice is not used. Add a deepgram key in Settings → Provider keys, or leave the voice provider empty.",
      'The flow asks for the speech model nova-2, but this server has no speech-to-text (stt: none): callers must type.',
    ]);
    // A vendor Voxflow has no voices of: no key would help, so none is suggested.
    expect(missingForFlow({ ...NOTHING, voiceProvider: 'cartesia' }, server('deepgram', 'openai', 'none'), NO_KEYS)).toEqual([
      'The flow asks for a cartesia voice, but this server has no voice (tts: none). Voxflow has no cartesia voices (it speaks with openai, deepgram, flite): leave the voice provider empty, or name one of those.',
    ]);
  });

  it('compares with the vendor the account\'s sessions use: its own key comes before the server\'s provider', () => {
    // As GET /v1/providers answers: each part's provider resolved as the engine resolves it.
    const ownDeepgramVoice = { stt_provider: 'deepgram', stt_api_key: null, llm_provider: 'openai', llm_api_key: null, tts_provider: 'deepgram', tts_api_key: 'dg…abcd' };
    expect(missingForFlow({ ...NOTHING, voiceProvider: 'openai' }, server('deepgram', 'openai', 'openai'), ownDeepgramVoice)).toEqual([
      "The flow asks for an openai voice, but this server speaks with deepgram (your key), and the flow's voice is not used. Set your voice key to an openai one in Settings → Provider keys, or leave the voice provider empty.",
    ]);
    expect(missingForFlow({ ...NOTHING, voiceProvider: 'deepgram' }, server('deepgram', 'openai', 'openai'), ownDeepgramVoice)).toEqual([]);
    // An account that picked a speech-to-text vendor without a key for it hears nothing, though the server could.
    const pickedWithoutKey = { ...ownDeepgramVoice, stt_provider: 'none' };
    expect(missingForFlow({ ...NOTHING, language: 'de' }, server('openai', 'openai', 'openai'), pickedWithoutKey)).toEqual([
      'The flow asks for speech recognition in de, but this server has no speech-to-text (stt: none): callers must type.',
    ]);
  });

  it('says when the built-in voice has no voice of the name the flow gives, or there is no voice at all', () => {
    expect(missingForFlow({ ...NOTHING, voiceName: 'nova' }, server('deepgram', 'openai', 'flite'), NO_KEYS)).toEqual([
      'The flow asks for the voice nova, but this server speaks with the built-in voice (flite), which has only slt, kal, kal16, awb, rms, awb_time: its default voice speaks. Name one of those, or add a key for the vendor whose voice it is in Settings → Provider keys.',
    ]);
    expect(missingForFlow({ ...NOTHING, voiceName: 'awb' }, server('deepgram', 'openai', 'flite'), NO_KEYS)).toEqual([]);
    // A hosted vendor's voice names are its own to check: said only when the vendor is not the session's.
    expect(missingForFlow({ ...NOTHING, voiceName: 'nova' }, server('deepgram', 'openai', 'openai'), NO_KEYS)).toEqual([]);
    expect(missingForFlow({ ...NOTHING, voiceName: 'nova' }, server('deepgram', 'openai', 'none'), NO_KEYS)).toEqual([
      "The flow asks for the voice nova, but this server has no voice (tts: none): the agent's words show as text only.",
    ]);
  });

  it('is satisfied by the server\'s providers or the account\'s own keys', () => {
    const asks = { llmModel: 'gpt-4o', voiceProvider: 'Deepgram', sttModel: 'nova-2', language: 'de' };
    expect(missingForFlow(asks, server('deepgram', 'openai', 'deepgram'), NO_KEYS)).toEqual([]);
    const ownKeys = { ...NO_KEYS, llm_provider: 'openai', llm_api_key: 'sk-…abcd', tts_provider: 'deepgram', tts_api_key: 'dg…abcd', stt_provider: 'deepgram', stt_api_key: 'dg…abcd' };
    expect(missingForFlow(asks, server('none', 'none', 'flite'), ownKeys)).toEqual([]);
  });
});
