// The provider fakes in a process of their own, so their work is not counted against the
// server's core in the load bench. Prints {"openai": url, "deepgram": url} and runs until killed.
import { startFakeDeepgram } from '../fakes/deepgram-server.ts';
import { startFakeOpenAI } from '../fakes/openai-server.ts';

const LONG_REPLY =
  'That is a good question, and I am glad you asked it. Let me think about it for a moment. ' +
  'The answer depends on a few things, so I will go through them one at a time. ' +
  'First, it matters what you already know. Second, it matters what you want to do next.';

const openai = await startFakeOpenAI({ rules: [{ respond: { text: LONG_REPLY } }] });
const deepgram = await startFakeDeepgram({ transcribe: () => 'Tell me something interesting.' });
process.stdout.write(`${JSON.stringify({ openai: openai.url, deepgram: deepgram.url })}\n`);
