// What the person taking a warm transfer is told before the caller joins them: what the call was
// about, in one short paragraph read aloud by the carrier. The session's own model writes it from
// the conversation so far; when there is no model, it fails, or it takes longer than a few
// seconds (the person is already listening), a plain account of the flow takes its place: its
// name, the states passed and the variables collected.
//
// Nothing secret goes into it. The model is told so, and long digit runs (a card number) are
// withheld from what it wrote; the fallback leaves out variables whose names say they hold a
// secret. Account secrets never reach the conversation (http tools fill them in at send time).
import type { ChatMessage, LanguageModel } from '../providers/types.ts';

/** The carriers read it aloud; a summary longer than this is cut at a sentence or word. */
export const SUMMARY_MAX_CHARS = 600;
/** The model's budget: past it the person hears the fallback. */
export const SUMMARY_MODEL_TIMEOUT_MS = 4_000;

const INSTRUCTION = [
  'You are handing this phone call to the colleague who will take it.',
  'In one short paragraph of at most three sentences, tell them who is calling if known, what the caller wants and what they have given so far.',
  'Plain words to be read aloud: no greeting, no lists, no markdown.',
  'Never include passwords, PINs, card or account security codes, or any other secret.',
].join(' ');

/** Variables whose names say they hold a secret are left out of the fallback. */
const SECRET_NAME = /pass|pin\b|^pin|secret|token|api_?key|ssn|cvv|cvc|card|security/i;
/** 12 or more digits in a row (spaces and dashes allowed): a card or account credential. */
const LONG_DIGITS = /\d(?:[ -]?\d){11,}/g;

export interface SummaryInput {
  llm: LanguageModel | null;
  /** The conversation so far, as the model remembers it. */
  history: readonly ChatMessage[];
  flowName: string | null;
  /** The states the call went through, in order. */
  path: readonly string[];
  variables: Readonly<Record<string, unknown>>;
  signal: AbortSignal;
  timeoutMs?: number;
}

/** Never rejects: the model's paragraph, or the fallback. */
export async function transferSummary(input: SummaryInput): Promise<string> {
  const fallback = fallbackSummary(input);
  if (!input.llm) return fallback;
  const budget = new AbortController();
  const timer = setTimeout(() => budget.abort(new Error('the summary took too long')), input.timeoutMs ?? SUMMARY_MODEL_TIMEOUT_MS);
  // Bounded even when a provider does not stop on its signal: the person is listening already.
  const outOfTime = new Promise<never>((_resolve, reject) => budget.signal.addEventListener('abort', () => reject(budget.signal.reason), { once: true }));
  try {
    const written = await Promise.race([modelSummary(input.llm, input.history, AbortSignal.any([input.signal, budget.signal])), outOfTime]);
    const clean = clip(written.replace(/\s+/g, ' ').replace(LONG_DIGITS, 'a number withheld').trim());
    return clean.length > 0 ? clean : fallback;
  } catch {
    return fallback;
  } finally {
    clearTimeout(timer);
    budget.abort();
  }
}

async function modelSummary(llm: LanguageModel, history: readonly ChatMessage[], signal: AbortSignal): Promise<string> {
  const transcript = history
    .flatMap((message) => {
      if (message.role === 'user') return [`Caller: ${message.content}`];
      if (message.role === 'assistant' && message.content) return [`Agent: ${message.content}`];
      return [];
    })
    .join('\n');
  const messages: ChatMessage[] = [
    { role: 'system', content: INSTRUCTION },
    { role: 'user', content: `The call so far:\n${transcript || '(nothing said yet)'}\n\nWrite the summary for the colleague.` },
  ];
  let text = '';
  for await (const chunk of llm.stream({ messages, tools: [], signal })) {
    if (chunk.type === 'text') text += chunk.text;
    if (text.length > SUMMARY_MAX_CHARS * 2) break;
  }
  return text;
}

export function fallbackSummary(input: Pick<SummaryInput, 'flowName' | 'path' | 'variables'>): string {
  const states = input.path.filter((state, i) => input.path.indexOf(state) === i).map(spoken);
  const given = Object.entries(input.variables)
    .filter(([name, value]) => !SECRET_NAME.test(name) && value !== null && value !== undefined && value !== '')
    .map(([name, value]) => `${spoken(name)} ${String(typeof value === 'object' ? JSON.stringify(value) : value).slice(0, 80)}`);
  const parts = [`A caller from ${input.flowName ? `the ${spoken(input.flowName)} line` : 'the phone line'}.`];
  if (states.length > 0) parts.push(`They went through ${states.join(', ')}.`);
  if (given.length > 0) parts.push(`They gave ${given.join('; ')}.`);
  return clip(parts.join(' ').replace(LONG_DIGITS, 'a number withheld'));
}

/** `account_number` reads aloud as "account number". */
function spoken(name: string): string {
  return name.replace(/[_-]+/g, ' ').trim();
}

function clip(text: string): string {
  if (text.length <= SUMMARY_MAX_CHARS) return text;
  const cut = text.slice(0, SUMMARY_MAX_CHARS);
  const sentence = cut.lastIndexOf('. ');
  if (sentence > SUMMARY_MAX_CHARS / 2) return cut.slice(0, sentence + 1);
  const word = cut.lastIndexOf(' ');
  return `${cut.slice(0, word > 0 ? word : cut.length)}…`;
}
