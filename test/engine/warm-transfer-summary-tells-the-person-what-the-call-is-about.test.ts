// What the person taking a warm transfer hears before the caller joins: the session's model's
// paragraph over the conversation, or, when there is no model, it fails or is too slow, the
// flow's own account (its name, the states passed, what the caller gave). Short enough to be
// read aloud, and never a secret.
import { describe, expect, it } from 'vitest';
import { fallbackSummary, SUMMARY_MAX_CHARS, transferSummary, type SummaryInput } from '../../server/engine/transfer-summary.ts';
import type { ChatMessage, LanguageModel, LlmChunk } from '../../server/providers/types.ts';

function model(reply: (messages: ChatMessage[], signal: AbortSignal) => AsyncIterable<LlmChunk>): LanguageModel & { asked: ChatMessage[][] } {
  const asked: ChatMessage[][] = [];
  return {
    provider: 'test',
    model: 'test',
    asked,
    stream: ({ messages, signal }) => {
      asked.push(messages);
      return reply(messages, signal);
    },
  };
}

async function* says(text: string): AsyncIterable<LlmChunk> {
  yield { type: 'text', text };
  yield { type: 'done', finishReason: 'stop' };
}

const call: Omit<SummaryInput, 'llm' | 'signal'> = {
  history: [
    { role: 'assistant', content: 'Press 1 to give your account number, or 0 for the front desk.' },
    { role: 'user', content: 'I want to move my cleaning to Friday.' },
    { role: 'user', content: 'The caller entered 0427' },
  ],
  flowName: 'front-desk',
  path: ['menu', 'account', 'thanks', 'human'],
  variables: { account_number: '0427', card_number: '4111 1111 1111 1111', pin: '9876' },
};

describe('a warm transfer summary', () => {
  it('is what the model wrote from the conversation, which it was given whole', async () => {
    const llm = model(() => says('Ann wants to move her cleaning to Friday; her account is 0427.'));
    const summary = await transferSummary({ ...call, llm, signal: new AbortController().signal });
    expect(summary).toBe('Ann wants to move her cleaning to Friday; her account is 0427.');
    const prompt = JSON.stringify(llm.asked[0]);
    expect(prompt).toContain('Caller: I want to move my cleaning to Friday.');
    expect(prompt).toContain('Agent: Press 1');
    expect(prompt).toMatch(/Never include passwords/);
  });

  it('withholds a card number the model repeated, and is cut to fit what the carrier reads aloud', async () => {
    const long = `The caller paid with 4111 1111 1111 1111. ${'They want a new appointment on a weekday morning. '.repeat(20)}`;
    const summary = await transferSummary({ ...call, llm: model(() => says(long)), signal: new AbortController().signal });
    expect(summary).not.toMatch(/4111/);
    expect(summary).toContain('a number withheld');
    expect(summary.length).toBeLessThanOrEqual(SUMMARY_MAX_CHARS);
    expect(summary).toMatch(/\.$/);
  });

  it('is the flow\'s account of the call when there is no model: its name, the states passed and what the caller gave, but no secret', async () => {
    const summary = await transferSummary({ ...call, llm: null, signal: new AbortController().signal });
    expect(summary).toBe('A caller from the front desk line. They went through menu, account, thanks, human. They gave account number 0427.');
    expect(summary).not.toMatch(/4111|9876/);
  });

  it('falls back when the model fails, and when it takes longer than its budget', async () => {
    const failing = model(async function* () {
      yield* [];
      throw new Error('503 from the model');
    });
    expect(await transferSummary({ ...call, llm: failing, signal: new AbortController().signal })).toBe(fallbackSummary(call));
    const slow = model((_messages, signal) =>
      (async function* () {
        await new Promise((resolve, reject) => {
          const timer = setTimeout(resolve, 30_000);
          signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(signal.reason);
          });
        });
        yield { type: 'text', text: 'too late' } as LlmChunk;
      })(),
    );
    const started = performance.now();
    expect(await transferSummary({ ...call, llm: slow, signal: new AbortController().signal, timeoutMs: 200 })).toBe(fallbackSummary(call));
    expect(performance.now() - started).toBeLessThan(10_000);
    // A model that says nothing is no summary either.
    expect(await transferSummary({ ...call, llm: model(() => says('   ')), signal: new AbortController().signal })).toBe(fallbackSummary(call));
  });
});
