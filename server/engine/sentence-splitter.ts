// Streams model text into sentences, so speech can start after the first sentence instead of
// after the whole answer. A sentence ends at . ! ? or … followed by white space, or at a line
// break; common abbreviations and decimal numbers do not end one.

const ABBREVIATIONS = new Set(['mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'st', 'vs', 'etc', 'e.g', 'i.e', 'approx', 'no']);
/** Very short fragments ("Hi.") are held back and joined to the next sentence: fewer, more natural TTS calls. */
const MIN_SENTENCE_CHARS = 12;

export class SentenceSplitter {
  private buffer = '';

  /** Adds streamed text; returns the sentences it completed. */
  push(text: string): string[] {
    this.buffer += text;
    const sentences: string[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const char = this.buffer[i]!;
      const next = this.buffer[i + 1];
      let ends = false;
      if (char === '\n') ends = true;
      else if ('.!?…'.includes(char) && next !== undefined && /\s/.test(next)) {
        ends = char !== '.' || !this.isAbbreviation(this.buffer.slice(start, i));
      }
      if (!ends) continue;
      const sentence = this.buffer.slice(start, i + 1).trim();
      if (sentence.length >= MIN_SENTENCE_CHARS || (char === '\n' && sentence.length > 0)) {
        sentences.push(sentence);
        start = i + 1;
      }
    }
    this.buffer = this.buffer.slice(start);
    return sentences;
  }

  /** The rest, when the model's answer is complete. */
  flush(): string[] {
    const rest = this.buffer.trim();
    this.buffer = '';
    return rest ? [rest] : [];
  }

  private isAbbreviation(before: string): boolean {
    const word = /([A-Za-z.]+)$/.exec(before)?.[1]?.toLowerCase();
    if (!word) return false;
    // A single capital letter ("J. R. R.") is an initial, not a sentence end.
    if (word.length === 1) return true;
    return ABBREVIATIONS.has(word.replace(/\.$/, ''));
  }
}
