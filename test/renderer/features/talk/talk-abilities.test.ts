// What the Talk tab says a session on this server can do, before Talk: from /capabilities and the
// account's own provider keys.
import { describe, expect, it } from 'vitest';
import { talkAbilities } from '../../../../renderer/src/features/talk/talk-abilities.ts';

const NO_KEYS = { stt_provider: null, stt_api_key: null, llm_provider: null, llm_api_key: null, tts_provider: null, tts_api_key: null };
const server = (stt: string, llm: string, tts: string, turn = 'silero') => ({
  stt: { provider: stt },
  llm: { provider: llm, model: llm === 'none' ? null : 'gpt-4o-mini' },
  tts: { provider: tts },
  turn: { provider: turn, ready: true },
  transport: { webrtc: true, websocket: true },
});

describe('what a test session can do', () => {
  it('names the model, the speech-to-text and the voice of a fully set-up server', () => {
    const said = talkAbilities(server('deepgram', 'openai', 'flite'), NO_KEYS);
    expect(said.model).toEqual({ ok: true, text: 'The agent answers with openai (gpt-4o-mini).' });
    expect(said.hearing).toEqual({ ok: true, text: 'It hears you through the microphone (speech-to-text: deepgram).' });
    expect(said.voice).toEqual({ ok: true, text: 'The agent speaks with the built-in voice (flite).' });
  });

  it('says what to do without a model or speech-to-text', () => {
    const said = talkAbilities(server('none', 'none', 'flite'), NO_KEYS);
    expect(said.model.ok).toBe(false);
    expect(said.model.text).toContain('The simulator still walks the flow');
    expect(said.hearing).toEqual({ ok: false, text: 'No speech-to-text: it cannot hear you. Type your turns instead.' });
  });

  it("counts the account's own keys for parts the server has none for", () => {
    const said = talkAbilities(server('none', 'none', 'flite'), { ...NO_KEYS, llm_provider: 'openai', llm_api_key: 'sk-…abcd', stt_provider: 'deepgram', stt_api_key: 'dg-…1234' });
    expect(said.model).toEqual({ ok: true, text: 'The agent answers with your openai key.' });
    expect(said.hearing.ok).toBe(true);
  });

  it("names the vendor the account's sessions use: its own key's, not the server's", () => {
    // As GET /v1/providers answers: each part resolved as the engine resolves it.
    const resolved = { stt_provider: 'deepgram', stt_api_key: null, llm_provider: 'openai', llm_api_key: 'sk-…abcd', tts_provider: 'deepgram', tts_api_key: 'dg-…1234' };
    const said = talkAbilities(server('deepgram', 'openai', 'openai'), resolved);
    expect(said.voice).toEqual({ ok: true, text: 'The agent speaks with deepgram.' });
    expect(said.model).toEqual({ ok: true, text: 'The agent answers with your openai key.' });
    expect(said.hearing).toEqual({ ok: true, text: 'It hears you through the microphone (speech-to-text: deepgram).' });
  });

  it('cannot hear without voice detection, whatever the speech-to-text', () => {
    expect(talkAbilities(server('deepgram', 'openai', 'flite', 'none'), NO_KEYS).hearing.ok).toBe(false);
  });
});
