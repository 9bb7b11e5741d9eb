// Turn-taking rules, pure (text, state hints and timings in, a decision out): whether what the
// caller said over the agent is a backchannel ("uh-huh") or a real interruption, and how long the
// silence after the caller's words must last before their turn is over. docs/flows.md#turn-taking
// says what a flow can set; the engine (spoken-turns.ts) applies the decisions.

/** A flow's turn-taking settings, resolved: state over flow over server. */
export interface TurnPolicy {
  /** Words the caller must say over the agent to stop it; 0: any speech stops it. */
  minInterruptionWords: number;
  /** ignore: a backchannel said over the agent does not stop it; interrupt: it does. */
  backchannels: 'ignore' | 'interrupt';
  /** The silence that ends a turn that neither looks unfinished nor is a short answer. */
  endpointingMs: number;
  /** The longest silence waited for when the words so far look unfinished; equal to endpointingMs: a fixed wait. */
  maxEndpointingMs: number;
}

/**
 * The server's defaults, when neither the state nor the flow says otherwise. Words that look
 * complete wait 800 ms (Pipecat's default silence too): "I'd like to book a table… for four" is
 * whole at its pause, and with 500 ms the agent answered half of it in 4 of the turns bench's 9
 * such sentences (pauses of 300–1,200 ms), with 800 ms in 3 over WebSocket and 2 on the phone
 * path. A short answer ("yes", "seven") waits half that, and unfinished words ("…on", "five five
 * five") 1,500 ms. docs/flows.md#turn-taking has the figures.
 */
export const DEFAULT_TURN_POLICY: Readonly<TurnPolicy> = {
  minInterruptionWords: 1,
  backchannels: 'ignore',
  endpointingMs: 800,
  maxEndpointingMs: 1_500,
};

/**
 * The engine before turn-taking rules: any speech stops the agent at once, and a fixed 500 ms of
 * silence ends the turn. The bench measures against it.
 */
export const BASELINE_TURN_POLICY: Readonly<TurnPolicy> = {
  minInterruptionWords: 0,
  backchannels: 'interrupt',
  endpointingMs: 500,
  maxEndpointingMs: 500,
};

/** The silence a complete short answer waits for: never less, so a breath inside "yes, please" is not an end. */
export const MIN_ENDPOINTING_MS = 200;

/**
 * The policy that behaves as the engine did before turn-taking rules: any speech stops the agent
 * at once and a fixed silence ends the turn.
 */
export function isBaselinePolicy(policy: TurnPolicy): boolean {
  return policy.backchannels === 'interrupt' && policy.minInterruptionWords === 0 && !isAdaptive(policy);
}

/** The wait is lengthened and shortened by the words (max above the base); else it is fixed. */
export function isAdaptive(policy: TurnPolicy): boolean {
  return policy.maxEndpointingMs > policy.endpointingMs;
}

/** Any of the pause rules applies: the agent's audio pauses on caller speech rather than stopping. */
export function pausesForBackchannels(policy: TurnPolicy): boolean {
  return policy.backchannels === 'ignore' || policy.minInterruptionWords > 0;
}

/** The shortest wait the policy can choose: the silence the VAD reports a pause after. */
export function shortestWaitMs(policy: TurnPolicy): number {
  if (!isAdaptive(policy)) return policy.endpointingMs;
  return Math.min(policy.endpointingMs, Math.max(MIN_ENDPOINTING_MS, Math.round(policy.endpointingMs / 2)));
}

// ── Words ───────────────────────────────────────────────────────────────────────────────────

/** Lower case, letters, digits and apostrophes only; hyphens and punctuation become spaces. */
export function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .replace(/[^\p{L}\p{N}']+/gu, ' ')
    .split(' ')
    .filter((word) => word.length > 0 && word !== "'");
}

/**
 * Backchannels by language (the primary subtag of the state's language). Each entry is a whole
 * utterance, in wordsOf form; an utterance made only of entries ("yeah okay", "mm-hmm right") is a
 * backchannel too. Interjections a recognizer spells many ways are listed in each spelling.
 */
const BACKCHANNELS: Record<string, readonly string[]> = {
  en: [
    'uh huh', 'uh-huh', 'uhhuh', 'mm hmm', 'mhm', 'mmhmm', 'mm', 'mmm', 'hmm', 'hm', 'um hum', 'yeah', 'yep', 'yup', 'yes', 'ya',
    'okay', 'ok', 'k', 'right', 'sure', 'i see', 'got it', 'gotcha', 'alright', 'all right', 'cool', 'great', 'nice',
    'exactly', 'indeed', 'true', 'oh', 'ah', 'aha', 'uh', 'um', 'wow', 'really', 'of course', 'fine', 'good', 'totally', 'makes sense',
  ],
  de: ['mhm', 'mm', 'hm', 'ja', 'jaja', 'genau', 'okay', 'ok', 'richtig', 'stimmt', 'aha', 'ach so', 'klar', 'gut', 'alles klar', 'verstehe', 'ich verstehe'],
  fr: ['mhm', 'mm', 'hum', 'oui', 'ouais', "d'accord", 'ok', 'okay', 'voilà', 'exactement', 'bien sûr', 'ah', 'je vois', 'entendu', 'bon'],
  es: ['mhm', 'mm', 'sí', 'si', 'vale', 'claro', 'ok', 'okay', 'ajá', 'aja', 'ya', 'bueno', 'exacto', 'entiendo', 'de acuerdo', 'perfecto'],
  it: ['mhm', 'mm', 'sì', 'si', 'certo', 'ok', 'okay', 'va bene', 'esatto', 'capisco', 'giusto', 'ah'],
  nl: ['mhm', 'mm', 'ja', 'oké', 'ok', 'okay', 'precies', 'klopt', 'juist', 'aha', 'ik snap het', 'prima'],
  pt: ['mhm', 'mm', 'sim', 'tá', 'ok', 'okay', 'certo', 'claro', 'exato', 'entendi', 'beleza', 'aham'],
};

/** The backchannel table for a language code (`en`, `de-DE`); null when there is none. */
function backchannelsFor(language: string): Set<string> | null {
  const table = BACKCHANNELS[language.toLowerCase().split(/[-_]/)[0] ?? ''];
  return table ? new Set(table.map((entry) => wordsOf(entry).join(' '))) : null;
}

/** How many words an utterance of this many words may cover: "yeah yeah okay sure" still is one. */
const LONGEST_BACKCHANNEL_WORDS = 4;

/**
 * Whether `text` is only backchannel ("uh-huh", "yeah, okay", "I see") in `language`. Unknown
 * languages have no table: null, and the caller falls back to the duration rule.
 */
export function isBackchannel(text: string, language: string): boolean | null {
  const table = backchannelsFor(language);
  if (!table) return null;
  const words = wordsOf(text);
  if (words.length === 0 || words.length > LONGEST_BACKCHANNEL_WORDS) return false;
  // Covered by entries from the left, longest first ("all right" before "all").
  const covered = (from: number): boolean => {
    if (from === words.length) return true;
    for (let len = Math.min(3, words.length - from); len >= 1; len--) {
      if (table.has(words.slice(from, from + len).join(' ')) && covered(from + len)) return true;
    }
    return false;
  };
  return covered(0);
}

/**
 * Whether words still coming in (a streaming recognizer's interim text) may yet be a backchannel:
 * they are one, or their last word begins one of several words ("I" of "I see", "all" of "all
 * right") after nothing but backchannel.
 */
export function mayBeBackchannel(text: string, language: string): boolean | null {
  const whole = isBackchannel(text, language);
  if (whole !== false) return whole;
  const words = wordsOf(text);
  const last = words.at(-1);
  const table = backchannelsFor(language);
  if (!table || last === undefined || words.length > LONGEST_BACKCHANNEL_WORDS) return false;
  const begins = [...table].some((entry) => entry.startsWith(`${last} `));
  return begins && (words.length === 1 || isBackchannel(words.slice(0, -1).join(' '), language) === true);
}

/**
 * Caller speech while the agent talks, shorter than this with no transcript to judge, is taken
 * for a backchannel or noise; at least this long, it stops the agent whatever was said. "Uh-huh"
 * and "I see" take 300–600 ms; "wait, no, Tuesday" at a normal pace takes about a second.
 */
export const BACKCHANNEL_MAX_MS = 800;

export type BargeInDecision =
  | { decision: 'interrupted'; reason: 'words' | 'duration' }
  | { decision: 'ignored_backchannel'; reason: 'backchannel' | 'too_few_words' | 'short' }
  | { decision: 'resumed'; reason: 'no_words' };

/**
 * What caller speech over the agent was, once it can be told: `transcript` is null while the
 * recognizer has said nothing (no streaming STT), `durationMs` the speech's length so far,
 * `ended` whether the caller has stopped. Null: not yet known, wait for more.
 *
 * Any speech that lasts BACKCHANNEL_MAX_MS stops the agent, whatever it turns out to be, unless
 * its words so far are all backchannel. Once the caller stops: no words (a cough, a car horn) and
 * the agent resumes; only backchannel, or fewer words than the minimum, and it is ignored; else it
 * is an interruption. A language with no backchannel table is judged by the duration alone.
 */
export function judgeBargeIn(input: { transcript: string | null; durationMs: number; ended: boolean; language: string }, policy: TurnPolicy): BargeInDecision | null {
  const { durationMs, ended } = input;
  const words = input.transcript === null ? [] : wordsOf(input.transcript);
  const long = durationMs >= BACKCHANNEL_MAX_MS;
  if (words.length > 0) {
    const backchannel = policy.backchannels !== 'ignore' ? false : ended ? isBackchannel(input.transcript!, input.language) : mayBeBackchannel(input.transcript!, input.language);
    if (backchannel === true) return ended ? { decision: 'ignored_backchannel', reason: 'backchannel' } : null;
    const enough = words.length >= Math.max(1, policy.minInterruptionWords);
    if (backchannel === false && enough) return { decision: 'interrupted', reason: 'words' };
    if (long && enough) return { decision: 'interrupted', reason: 'duration' };
    if (!ended) return null;
    return enough ? { decision: 'ignored_backchannel', reason: 'short' } : { decision: 'ignored_backchannel', reason: 'too_few_words' };
  }
  if (ended) return { decision: 'resumed', reason: 'no_words' };
  return long ? { decision: 'interrupted', reason: 'duration' } : null;
}

// ── End of turn ─────────────────────────────────────────────────────────────────────────────

/** What the state expects the caller to answer, from its tools' parameters and keypad. */
export interface TurnHints {
  /** A tool of the state takes a boolean: "yes" or "no" is an answer. */
  yesNo: boolean;
  /** Values of the state's tools' enum parameters, as said. */
  enumValues: readonly string[];
  /** A tool takes a number or integer: a number is an answer. */
  number: boolean;
  /** The state collects digits on the keypad (or by voice): a pause between digits is no end. */
  collectingDigits: boolean;
}

export const NO_HINTS: TurnHints = { yesNo: false, enumValues: [], number: false, collectingDigits: false };

/** `model_complete` / `model_unfinished`: the words said neither, and the end-of-turn model (--turn-model) decided. */
export type EndOfTurnReason = 'unfinished' | 'short_answer' | 'default' | 'fixed' | 'model_complete' | 'model_unfinished';

/** Words after which an English sentence cannot have ended. */
const UNFINISHED_EN = new Set([
  // conjunctions
  'and', 'or', 'but', 'because', 'cause', 'if', 'then', 'which', 'who', 'when', 'while', 'although', 'though', 'unless', 'until', 'since', 'whether', 'nor',
  // fillers
  'um', 'uh', 'er', 'erm', 'uhm',
  // prepositions
  'on', 'at', 'in', 'to', 'for', 'from', 'with', 'about', 'of', 'by', 'into', 'onto', 'after', 'before', 'between', 'around', 'near', 'under', 'over', 'through', 'than', 'via', 'per',
  // articles, determiners, possessives
  'a', 'an', 'the', 'my', 'your', 'our', 'their', 'every', 'each',
  // words that need what follows
  "i'd", "i'm", "i'll", "let's", 'like',
]);

/** The same for other languages: conjunctions, fillers, prepositions and articles. */
const UNFINISHED_OTHER: Record<string, readonly string[]> = {
  de: ['und', 'oder', 'aber', 'weil', 'dass', 'wenn', 'ähm', 'äh', 'öhm', 'am', 'an', 'auf', 'in', 'im', 'zu', 'zum', 'zur', 'für', 'mit', 'von', 'vom', 'bei', 'nach', 'der', 'die', 'das', 'den', 'dem', 'des', 'ein', 'eine', 'einen', 'einem', 'mein', 'meine'],
  fr: ['et', 'ou', 'mais', 'parce', 'que', 'qui', 'si', 'euh', 'heu', 'à', 'au', 'de', 'du', 'des', 'en', 'pour', 'avec', 'sur', 'le', 'la', 'les', 'un', 'une', 'mon', 'ma', 'mes'],
  es: ['y', 'o', 'pero', 'porque', 'que', 'si', 'eh', 'este', 'em', 'a', 'al', 'de', 'del', 'en', 'para', 'por', 'con', 'el', 'la', 'los', 'las', 'un', 'una', 'mi'],
  it: ['e', 'o', 'ma', 'perché', 'che', 'se', 'ehm', 'a', 'al', 'di', 'del', 'in', 'per', 'con', 'su', 'il', 'lo', 'la', 'i', 'gli', 'le', 'un', 'una', 'mio', 'mia'],
  nl: ['en', 'of', 'maar', 'omdat', 'dat', 'als', 'eh', 'uhm', 'op', 'in', 'aan', 'naar', 'voor', 'met', 'van', 'bij', 'de', 'het', 'een', 'mijn'],
  pt: ['e', 'ou', 'mas', 'porque', 'que', 'se', 'é', 'hum', 'a', 'ao', 'de', 'do', 'da', 'em', 'no', 'na', 'para', 'por', 'com', 'o', 'os', 'as', 'um', 'uma', 'meu', 'minha'],
};

const YES_NO: Record<string, readonly string[]> = {
  en: ['yes', 'no', 'yeah', 'yep', 'yup', 'nope', 'nah', 'sure', 'correct', 'right', 'okay', 'ok', 'yes please', 'no thanks', 'no thank you', 'that is right', "that's right", 'of course', 'not really', 'absolutely'],
  de: ['ja', 'nein', 'genau', 'richtig', 'klar', 'ja bitte', 'nein danke', 'doch'],
  fr: ['oui', 'non', 'ouais', "d'accord", 'exactement', 'oui merci', 'non merci'],
  es: ['sí', 'si', 'no', 'claro', 'vale', 'correcto', 'no gracias'],
  it: ['sì', 'si', 'no', 'certo', 'esatto', 'no grazie'],
  nl: ['ja', 'nee', 'klopt', 'precies', 'nee dank je'],
  pt: ['sim', 'não', 'nao', 'claro', 'certo', 'não obrigado'],
};

const NUMBER_WORDS_EN = new Set([
  'zero', 'oh', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen',
  'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety',
  'hundred', 'thousand', 'double', 'triple',
]);
const DIGIT_WORDS_EN = new Set(['zero', 'oh', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine']);

const primary = (language: string) => language.toLowerCase().split(/[-_]/)[0] ?? '';

function isNumberWord(word: string, language: string): boolean {
  return /^\d+([.,]\d+)?$/.test(word) || (primary(language) === 'en' && NUMBER_WORDS_EN.has(word));
}

/** The words end in the middle of something: a joining word, a filler, or a run of single digits. */
function looksUnfinished(words: readonly string[], language: string, hints: TurnHints): boolean {
  const last = words.at(-1);
  if (last === undefined) return false;
  const lang = primary(language);
  const joiners = lang === 'en' ? UNFINISHED_EN : new Set(UNFINISHED_OTHER[lang] ?? []);
  if (joiners.has(last)) return true;
  // "five five five": a phone or account number is read in groups, with pauses between them.
  const digitRun = (word: string) => /^\d{1,4}$/.test(word) || (lang === 'en' && DIGIT_WORDS_EN.has(word));
  let run = 0;
  for (let i = words.length - 1; i >= 0 && digitRun(words[i]!); i--) run++;
  if (run >= 2 || (run >= 1 && hints.collectingDigits)) return true;
  return false;
}

/**
 * A whole, short answer: yes/no or a number of a word or two, whatever the state asked (callers
 * answer a question the prompt asks as much as one a tool's parameters name), or one of the
 * state's enum values. A caller who goes on ("seven… thirty") is heard at their first voiced
 * frame and the turn goes on.
 */
function isShortAnswer(words: readonly string[], language: string, hints: TurnHints): boolean {
  if (words.length === 0 || words.length > 4) return false;
  const said = words.join(' ');
  if (hints.yesNo || words.length <= 2) {
    const table = new Set((YES_NO[primary(language)] ?? []).map((entry) => wordsOf(entry).join(' ')));
    if (table.has(said)) return true;
  }
  for (const value of hints.enumValues) if (wordsOf(value).join(' ') === said) return true;
  if (!hints.collectingDigits && words.length <= 2 && words.every((word) => isNumberWord(word, language))) return true;
  return false;
}

export interface EndOfTurnDecision {
  waitMs: number;
  reason: EndOfTurnReason;
}

/**
 * How long the silence after `text` (the caller's words so far) must last before their turn is
 * over: the policy's maximum when the words look unfinished, the shortest wait for a whole short
 * answer to the state's question, else the policy's base wait. A fixed policy always waits its base.
 */
export function decideEndOfTurn(text: string, language: string, hints: TurnHints, policy: TurnPolicy): EndOfTurnDecision {
  if (!isAdaptive(policy)) return { waitMs: policy.endpointingMs, reason: 'fixed' };
  const words = wordsOf(text);
  if (looksUnfinished(words, language, hints)) return { waitMs: policy.maxEndpointingMs, reason: 'unfinished' };
  if (hints.collectingDigits && words.length > 0 && words.every((word) => isNumberWord(word, language))) {
    return { waitMs: policy.maxEndpointingMs, reason: 'unfinished' };
  }
  if (isShortAnswer(words, language, hints)) return { waitMs: shortestWaitMs(policy), reason: 'short_answer' };
  return { waitMs: policy.endpointingMs, reason: 'default' };
}
