// What flite is given to say: text reduced to the printable ASCII it can pronounce, and split
// into runs short enough for one flite run each. Pure string work, no worker involved.

/** Per flite run: longer text is split on sentence boundaries into several runs. */
export const FLITE_MAX_CHARS = 1000;

const REPLACEMENTS: Array<[RegExp, string]> = [
  [/[\u2018\u2019\u201A\u2032]/g, "'"],
  [/[\u201C\u201D\u201E\u2033]/g, '"'],
  [/[\u2013\u2014\u2015]/g, ', '],
  [/\u2026/g, '...'],
  // Markdown and markup an LLM may emit: formatting, not words to be heard.
  [/[*_#`~|<>[\]{}\\^]/g, ' '],
];

/**
 * Reduces text to what flite can say: accents folded to ASCII letters (é → e), typographic
 * quotes and dashes to ASCII, markup symbols and anything else outside printable ASCII (emoji,
 * other scripts) dropped. Empty when nothing speakable is left.
 */
export function cleanTextForFlite(text: string): string {
  let clean = text.normalize('NFKD').replace(/\p{M}/gu, '');
  for (const [pattern, replacement] of REPLACEMENTS) clean = clean.replace(pattern, replacement);
  clean = clean.replace(/[^\x20-\x7E]/g, ' ').replace(/\s+/g, ' ').trim();
  return /[A-Za-z0-9]/.test(clean) ? clean : '';
}

/** Splits text into runs of at most `maxChars`, at sentence ends, else at spaces, else hard. */
export function splitForFlite(text: string, maxChars: number = FLITE_MAX_CHARS): string[] {
  if (text === '') return [];
  if (text.length <= maxChars) return [text];
  const sentences = text.match(/[^.!?]+(?:[.!?]+(?:\s+|$)|$)/g) ?? [text];
  const parts: string[] = [];
  let current = '';
  const emit = () => {
    if (current.trim() !== '') parts.push(current.trim());
    current = '';
  };
  for (let sentence of sentences) {
    if (current.length + sentence.length <= maxChars) {
      current += sentence;
      continue;
    }
    emit();
    while (sentence.length > maxChars) {
      const space = sentence.lastIndexOf(' ', maxChars);
      const cut = space > 0 ? space : maxChars;
      parts.push(sentence.slice(0, cut).trim());
      sentence = sentence.slice(cut);
    }
    current = sentence;
  }
  emit();
  return parts;
}
