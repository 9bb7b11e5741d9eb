// A flow's own voice (settings.voice) is used by the vendor the session speaks with, whatever the
// case its provider is written in, and never handed to another vendor.
import { describe, expect, it } from 'vitest';
import { withFlowVoice } from '../../server/engine/flow-voice.ts';
import type { FlowDocument } from '../../server/flow/types.ts';
import type { SynthesisHints, TextToSpeech } from '../../server/providers/types.ts';

function recordingVoice(provider: string): { tts: TextToSpeech; voices: Array<string | undefined> } {
  const voices: Array<string | undefined> = [];
  return {
    voices,
    tts: {
      provider,
      async *synthesize(_text: string, _signal: AbortSignal, hints?: SynthesisHints) {
        voices.push(hints?.voice);
        yield new Int16Array(160);
      },
    } as TextToSpeech,
  };
}

const flowWith = (voice: { provider?: string; voice?: string }) =>
  ({ id: 'f', version: '1', initial_state: 's', settings: { voice }, states: { s: { agent: { prompt: 'p' } } } }) as FlowDocument;

async function speakOnce(tts: TextToSpeech): Promise<void> {
  for await (const _ of tts.synthesize('Hello.', new AbortController().signal)) break;
}

describe("a flow's own voice", () => {
  it.each([
    ['deepgram', 'aura-2-thalia-en'],
    ['Deepgram', 'aura-2-thalia-en'],
    [' DEEPGRAM ', 'aura-2-thalia-en'],
    [undefined, 'aura-2-thalia-en'],
    ['openai', undefined],
  ])('provider %j on a deepgram session speaks with voice %j', async (provider, expected) => {
    const { tts, voices } = recordingVoice('deepgram');
    await speakOnce(withFlowVoice(tts, flowWith({ ...(provider === undefined ? {} : { provider }), voice: 'aura-2-thalia-en' })));
    expect(voices).toEqual([expected]);
  });
});
