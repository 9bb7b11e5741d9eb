// The provider fakes in a process of their own, so their work is not counted against the
// server's core in the load bench. Prints {"openai": url, "deepgram": url} and runs until killed.
import { startFakeDeepgram } from '../fakes/deepgram-server.ts';
import { startFakeOpenAI } from '../fakes/openai-server.ts';

const LONG_REPLY = [
  'That is a good question, and I am glad you asked it',
  'Let me think about it for a moment',
  'The answer depends on a few things, so I will go through them one at a time',
  'First, it matters what you already know',
  'Second, it matters what you want to do next',
];

// Each reply worded apart, every sentence of it, as a model's replies are: flite keeps the
// sentences it has said (server/providers/tts/flite-cache.ts), and the same words for every
// caller would leave it nothing to synthesize after the first, measuring a server no real call
// meets. The number changes a sentence's length by a word or two.
let replies = 0;
const openai = await startFakeOpenAI({
  rules: [{ respond: () => ((replies += 1), { text: LONG_REPLY.map((sentence) => `${sentence}, reply ${replies}.`).join(' ') }) }],
});
const deepgram = await startFakeDeepgram({ transcribe: () => 'Tell me something interesting.' });
process.stdout.write(`${JSON.stringify({ openai: openai.url, deepgram: deepgram.url })}\n`);
