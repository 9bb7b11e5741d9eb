// A speech recogniser of a closed vocabulary, for the Deepgram fake's `transcribe`: it knows the
// sentences a test's call can contain, each by its sound as the embedded voice says it, and hears
// an utterance as the run of those sentences whose loudness over time (20 ms frames) matches it
// best, one after the other. So the fake hears what was actually said, in whatever order and
// grouping the audio came (the agent's sentences played back to back, a caller's turn), and
// nothing it was not given; the words it answers are the test's own rendering of each sentence
// (lower case, numbers in words), so a test can tell recognised words from typed ones.
import { splitForFlite } from '../../server/providers/tts/flite.ts';
import type { TextToSpeech } from '../../server/providers/types.ts';

const FRAME = 320; // 20 ms at 16 kHz
const FLOOR_DB = -60;
/** Frames quieter than this are the gaps between sentences (the fake's own speech threshold). */
const VOICED_DB = -40;
/** A sentence matches when its frames differ from the audio by at most this much on average. */
const MATCH_DB = 6;
const SHIFTS = [0, -1, 1, -2, 2];
/** Frames of a first word the audio may lack (see below). */
const MISSED_START = 12;

interface Template {
  heard: string;
  envelope: number[];
}

function envelopeOf(pcm: Int16Array): number[] {
  const out: number[] = [];
  for (let at = 0; at + FRAME <= pcm.length; at += FRAME) {
    let sum = 0;
    for (let i = at; i < at + FRAME; i++) sum += pcm[i]! ** 2;
    const rms = Math.sqrt(sum / FRAME);
    out.push(rms === 0 ? FLOOR_DB : Math.max(FLOOR_DB, 20 * Math.log10(rms / 32768)));
  }
  return out;
}

function trim(envelope: number[]): number[] {
  let from = 0;
  let to = envelope.length;
  while (from < to && envelope[from]! < VOICED_DB) from++;
  while (to > from && envelope[to - 1]! < VOICED_DB) to--;
  return envelope.slice(from, to);
}

async function speak(tts: TextToSpeech, text: string): Promise<Int16Array> {
  const chunks: Int16Array[] = [];
  for await (const chunk of tts.synthesize(text, new AbortController().signal, { aheadMs: 0 })) chunks.push(chunk);
  const out = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/**
 * A `transcribe` for the Deepgram fake that hears the given sentences. `vocabulary` maps what is
 * said (a line of the agent's or the caller's; several sentences are learnt one by one) to the
 * words the recogniser answers for it. Audio it cannot match answers ''.
 */
export async function templateRecogniser(tts: TextToSpeech, vocabulary: Record<string, string>): Promise<(pcm: Int16Array) => string> {
  const templates: Template[] = [];
  for (const [said, heard] of Object.entries(vocabulary)) {
    templates.push({ heard, envelope: trim(envelopeOf(await speak(tts, said))) });
    // Each sentence on its own too: the engine may say a line sentence by sentence.
    const sentences = said.match(/[^.!?]+(?:[.!?]+(?:\s+|$)|$)/g) ?? [];
    const words = heard.split(' ');
    if (sentences.length < 2) continue;
    // The sentences' share of the heard words, by their share of the said words.
    const saidWords = sentences.map((s) => s.trim().split(/\s+/).length);
    const total = saidWords.reduce((a, b) => a + b, 0);
    let taken = 0;
    for (const [i, sentence] of sentences.entries()) {
      const count = i === sentences.length - 1 ? words.length - taken : Math.round((saidWords[i]! / total) * words.length);
      const part = words.slice(taken, taken + count).join(' ');
      taken += count;
      for (const piece of splitForFlite(sentence.trim())) templates.push({ heard: part, envelope: trim(envelopeOf(await speak(tts, piece))) });
    }
  }
  return (pcm) => {
    const audio = envelopeOf(pcm);
    const heard: string[] = [];
    let at = 0;
    for (;;) {
      while (at < audio.length && audio[at]! < VOICED_DB) at++;
      if (at >= audio.length) break;
      let best: { template: Template; next: number; rank: number[] } | null = null;
      // The engine hands speech to text from just before the voice activity model heard speech
      // start, which may be a few frames into the first word: the first sentence may be heard
      // from up to MISSED_START frames in.
      const skips = heard.length === 0 ? Array.from({ length: MISSED_START + 1 }, (_, i) => i) : [0];
      for (const template of templates) {
        for (const skip of skips) {
          for (const shift of SHIFTS) {
            const from = at + shift;
            if (from < 0 || skip >= template.envelope.length) continue;
            const rest = template.envelope.length - skip;
            const length = Math.min(rest, audio.length - from);
            // A partial utterance (an interim) is matched on what has been heard of it so far.
            if (length < Math.min(10, rest)) continue;
            let diff = 0;
            for (let k = 0; k < length; k++) diff += Math.abs(audio[from + k]! - template.envelope[skip + k]!);
            const cost = diff / length;
            if (cost > MATCH_DB) continue;
            // A sentence heard whole beats one heard in part (only an interim hears a part); then the
            // longest wins, a whole line over its first sentence; then the closest.
            const rank = [length === rest ? 1 : 0, template.envelope.length, -skip, -cost];
            if (!best || compare(rank, best.rank) > 0) best = { template, next: from + rest, rank };
          }
        }
      }
      if (!best) break;
      heard.push(best.template.heard);
      at = best.next;
    }
    return heard.join(' ');
  };
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}
